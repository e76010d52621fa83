"""Budgets against moto: SNS filter policies per team, and the /budgets API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import boto3
import pytest
from moto import mock_aws

from costtracker.lambda_context import FakeLambdaContext
from costtracker.local_api import with_local_admin
from shared.app import runtime
from shared.config.ledger import LedgerConfig
from shared.domain.clock import FixedClock
from shared.services.budget_tick import run_tick
from tests.aws_events import ec2_state_event
from tests.support import moto_instance, moto_ledger

T0 = datetime(2026, 11, 1, tzinfo=UTC)
TABLE = "ledger-budgets"
CONFIG = LedgerConfig.model_validate(
    {
        "live_prices": False,
        "prices": {"ec2": {"trn1.32xlarge": "20"}},
        "budgets": [
            {
                "budget_id": "nlp",
                "scope": {"tag": {"team": "nlp"}},
                "amount_usd": "10",
                "thresholds": [100],
            },
            {
                "budget_id": "vision",
                "scope": {"tag": {"team": "vision"}},
                "amount_usd": "10",
                "thresholds": [100],
            },
        ],
    }
)


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    with mock_aws():
        moto_ledger(monkeypatch, TABLE, with_local_admin(CONFIG.model_dump_json()))
        sns = boto3.client("sns", region_name="us-east-1")
        sqs = boto3.client("sqs", region_name="us-east-1")
        topic = sns.create_topic(Name="finance")["TopicArn"]
        queue = sqs.create_queue(QueueName="nlp-finance")["QueueUrl"]
        queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]
        sns.subscribe(
            TopicArn=topic,
            Protocol="sqs",
            Endpoint=queue_arn,
            Attributes={
                "FilterPolicy": json.dumps({"team": ["nlp"]}),
                "RawMessageDelivery": "true",
            },
        )
        ec2 = boto3.client("ec2", region_name="us-east-1")
        ids = []
        for team in ("nlp", "vision"):
            ids.append(
                moto_instance(ec2, "trn1.32xlarge", {"training-job": f"{team}-job", "team": team})
            )
        monkeypatch.setenv("FINANCE_TOPIC_ARN", topic)
        clock = FixedClock(T0)
        with runtime.override(clock):
            from functions.instance_state.handler import handler

            for n, iid in enumerate(ids):
                handler(
                    ec2_state_event(f"e{n}", iid, "running", "2026-11-01T00:00:00Z"),
                    FakeLambdaContext("test"),
                )
            yield {"sqs": sqs, "queue": queue, "clock": clock}


def test_a_team_filter_policy_receives_only_that_teams_alerts(aws: dict[str, Any]) -> None:
    now = T0 + timedelta(hours=1)  # both teams at $20 of $10: both budgets alert
    sent = run_tick(
        runtime.ledger_deps(), runtime.budget_store(), CONFIG, runtime.notifier(), now, lambda: 55.0
    ).alerts
    assert sorted(sent) == ["nlp:100", "vision:100"]
    messages = aws["sqs"].receive_message(
        QueueUrl=aws["queue"], MaxNumberOfMessages=10, MessageAttributeNames=["All"]
    )["Messages"]
    assert len(messages) == 1
    attributes = messages[0]["MessageAttributes"]
    assert attributes["team"]["StringValue"] == "nlp"
    assert attributes["budget_id"]["StringValue"] == "nlp"
    assert attributes["kind"]["StringValue"] == "budget"
    assert attributes["severity"]["StringValue"] == "critical"
    assert "Budget nlp at 100 %: $20.00 of $10.00" in messages[0]["Body"]


def api(method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    from costtracker.local_api import proxy_event
    from functions.job_cost_api.handler import handler

    event = proxy_event(
        method,
        path,
        {"Content-Type": "application/json"},
        json.dumps(body) if body is not None else None,
    )
    response = handler(event, FakeLambdaContext("test"))  # type: ignore[arg-type]
    return response["statusCode"], json.loads(response["body"])


def test_budgets_api_lists_sets_and_deletes(aws: dict[str, Any]) -> None:
    aws["clock"].advance_to(T0 + timedelta(minutes=15))
    status, listed = api("GET", "/budgets")
    assert status == 200 and [b["budget_id"] for b in listed["budgets"]] == ["nlp", "vision"]
    assert listed["budgets"][0]["spend_usd"] == "5.000000000"  # 15 min at $20/h
    assert listed["budgets"][0]["source"] == "context"
    status, created = api(
        "PUT",
        "/budgets/nlp-month",
        {"scope": {"tag": {"team": "nlp"}}, "amount_usd": "500", "period": "month"},
    )
    assert status == 200 and created["source"] == "api" and created["period_key"] == "2026-11"
    # A budget from CDK context is changed where it is defined, not through the API.
    status, refused = api("DELETE", "/budgets/vision")
    assert status == 409 and "ledger.budgets" in refused["message"]
    status, listed = api("GET", "/budgets")
    assert [b["budget_id"] for b in listed["budgets"]] == ["nlp", "nlp-month", "vision"]
    assert api("DELETE", "/budgets/nlp-month")[0] == 200
    status, listed = api("GET", "/budgets")
    assert [b["budget_id"] for b in listed["budgets"]] == ["nlp", "vision"]
    assert api("GET", "/budgets/nlp-month")[0] == 404


def test_the_api_and_the_cli_show_one_forecast_that_holds_between_events(
    aws: dict[str, Any],
) -> None:
    """$20/h from 00:00 against $10, no declared end, known to have run 0 h: assumed to
    run as long again as its 1 h minimum (to 02:00), $40.00, and the same projection
    crosses 100 % at 00:30; a tick later with no event (before the range's low end,
    01:06:40) gives the same forecast, the crossing then past."""
    from costtracker.render.reports import budgets

    aws["clock"].advance_to(T0 + timedelta(minutes=15))
    _, first = api("GET", "/budgets")
    nlp = first["budgets"][0]
    assert nlp["projected_total_usd"] == nlp["forecast"]["total_usd"] == "40.000000000"
    assert nlp["crossing_100_at"] == "2026-11-01T00:30:00Z" and nlp["high_crossing_at"] is None
    low, high = Decimal(nlp["projected_low_usd"]), Decimal(nlp["projected_high_usd"])
    assert (low, high) == (Decimal("22.222222222"), Decimal(200))
    (job,) = nlp["forecast"]["jobs"]
    assert job["method"] == "assumed_duration" and job["end"] == "2026-11-01T02:00:00Z"
    text = budgets(first)
    assert "nlp: forecast $40.00 (range $22.22 to $200.00)" in text
    assert "100 % projected at 2026-11-01T00:30:00Z" in text
    assert "Forecast range: 80 % interval" in text and "Assumed: a job without" in text
    aws["clock"].advance_to(T0 + timedelta(minutes=50))
    _, later = api("GET", "/budgets")
    again = later["budgets"][0]
    for key in ("total_usd", "low_usd", "high_usd", "until", "jobs", "revises_at"):
        assert again["forecast"][key] == nlp["forecast"][key], key
    assert again["crossing_100_at"] is None
    hundred = [c for c in again["forecast"]["crossings"] if c["threshold"] == 100]
    assert hundred[0]["state"] == "crossed"
    assert "100 % already crossed" in budgets(later)


@pytest.mark.parametrize(
    ("body", "names"),
    [
        ({"scope": {"tag": {"team": "nlp"}}, "amount_usd": "-5"}, "amount_usd"),
        (
            {"scope": {"tag": {"team": "nlp"}}, "amount_usd": "5", "thresholds": [5000]},
            "thresholds",
        ),
        ({"scope": {"tag": {"colour": "red"}}, "amount_usd": "5"}, "scope.tag.colour"),
        ({"scope": {}, "amount_usd": "5"}, "scope"),
        ({"amount_usd": "5"}, "scope"),
    ],
)
def test_bad_budget_definitions_get_a_4xx_naming_the_field(
    aws: dict[str, Any], body: dict[str, Any], names: str
) -> None:
    status, answer = api("PUT", "/budgets/bad", body)
    assert 400 <= status < 500
    assert names in json.dumps(answer)
