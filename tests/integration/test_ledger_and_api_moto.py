"""The DynamoDB ledger and the job-cost API against moto, with AWS calls counted."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import boto3
import pytest
from moto import mock_aws

from costtracker.lambda_context import FakeLambdaContext
from costtracker.local_api import LOCAL_CALLER_ARN, with_local_admin
from shared.adapters.daily_store import SummaryStore
from shared.adapters.table import DynamoTable
from shared.app import runtime
from shared.config.ledger import LedgerConfig, PriceOverrides
from shared.domain.clock import FixedClock
from tests.aws_events import ec2_state_event, scheduled_event
from tests.integration.conftest import CallCounter
from tests.support import moto_instance, moto_ledger

T0 = datetime(2026, 11, 1, 10, tzinfo=UTC)
TABLE = "ledger-test"
CONFIG = LedgerConfig(
    live_prices=False, prices=PriceOverrides(ec2={"trn1.32xlarge": Decimal("21.50")})
)


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    with mock_aws():
        moto_ledger(monkeypatch, TABLE, with_local_admin(CONFIG.model_dump_json()))
        ec2 = boto3.client("ec2", region_name="us-east-1")
        volume = {"DeviceName": "/dev/sdf", "Ebs": {"VolumeSize": 100, "VolumeType": "gp3"}}
        ids = {}
        for job, team in (("llama", "nlp"), ("vit", "vision")):
            tags = {"training-job": job, "team": team, "project": "foundation"}
            ids[job] = moto_instance(ec2, "trn1.32xlarge", tags, BlockDeviceMappings=[volume])
        clock = FixedClock(T0)
        with runtime.override(clock):
            yield {
                "ids": ids,
                "clock": clock,
                "client": boto3.client("dynamodb", region_name="us-east-1"),
            }


def send(aws: dict[str, Any], eid: str, seconds: int, state: str, job: str = "llama") -> str:
    from functions.instance_state.handler import handler

    event = ec2_state_event(eid, aws["ids"][job], state, T0 + timedelta(seconds=seconds))
    aws["clock"].advance_to(T0 + timedelta(seconds=seconds))
    result: dict[str, Any] = handler(event, FakeLambdaContext("test"))
    return str(result["result"])


def api(
    path: str, query: dict[str, str] | None = None, arn: str | None = LOCAL_CALLER_ARN
) -> tuple[int, dict[str, Any]]:
    from functions.job_cost_api.handler import handler

    event = {
        "resource": path,
        "path": path,
        "httpMethod": "GET",
        "headers": {},
        "multiValueHeaders": {},
        "queryStringParameters": query,
        "multiValueQueryStringParameters": {k: [v] for k, v in (query or {}).items()} or None,
        "pathParameters": None,
        "stageVariables": None,
        "body": None,
        "isBase64Encoded": False,
        "requestContext": {
            "requestId": "r",
            "stage": "prod",
            "httpMethod": "GET",
            "path": path,
            "resourcePath": path,
            "identity": {"userArn": arn} if arn else {},
        },
    }
    response = handler(event, FakeLambdaContext("test"))
    return response["statusCode"], json.loads(response["body"])


def test_state_events_write_at_most_three_items_together_and_never_scan(
    aws: dict[str, Any], call_counter: CallCounter
) -> None:
    assert send(aws, "e1", 0, "running") == "applied"
    # One transaction: the instance pointer, its head and the job's rollup.
    assert call_counter.items_written == [3]
    assert call_counter.count("ec2", "DescribeInstances") == 1
    call_counter.clear()
    assert send(aws, "e1", 0, "running") == "duplicate"
    assert call_counter.items_written == []
    assert call_counter.count("ec2") == 0 and call_counter.count("dynamodb") == 0  # kept warm
    call_counter.clear()
    assert send(aws, "e2", 5400, "stopped") == "applied"
    # The head, the closed segment's record and the rollup, in one call.
    assert call_counter.items_written == [3]
    assert call_counter.count("dynamodb", "Scan") == 0


def test_get_job_is_one_query_and_accrues_open_segments_to_now(
    aws: dict[str, Any], call_counter: CallCounter
) -> None:
    send(aws, "e1", 0, "running")
    aws["clock"].advance_to(T0 + timedelta(hours=2))
    call_counter.clear()
    status, body = api("/jobs/llama")
    assert status == 200
    assert call_counter.count("dynamodb") == 1 and call_counter.count("dynamodb", "Query") == 1
    assert Decimal(body["cost_usd"]["instance"]) == Decimal(43)  # 2 h x $21.50
    assert body["status"] == "running" and body["burn_rate_usd_per_hour"] == "21.500000000"
    segment = body["instances"][0]["segments"][0]
    assert segment["state"] == "open" and segment["rates"][0]["source"] == "override"


def test_list_jobs_filters_by_indexed_tag_and_paginates(aws: dict[str, Any]) -> None:
    send(aws, "e1", 0, "running", "llama")
    send(aws, "e2", 60, "running", "vit")
    aws["clock"].advance_to(T0 + timedelta(hours=1))
    status, body = api("/jobs", {"team": "vision"})
    assert status == 200 and [j["job_id"] for j in body["jobs"]] == ["vit"]
    status, page1 = api("/jobs", {"limit": "1", "project": "foundation"})
    assert status == 200 and len(page1["jobs"]) == 1 and page1["next_token"]
    status, page2 = api(
        "/jobs", {"limit": "1", "project": "foundation", "next_token": page1["next_token"]}
    )
    assert {page1["jobs"][0]["job_id"], page2["jobs"][0]["job_id"]} == {"llama", "vit"}
    assert page2["next_token"] is None


@pytest.mark.parametrize(
    ("path", "query", "status", "names"),
    [
        ("/jobs/nope", None, 404, "nope"),
        ("/jobs", {"limit": "1000"}, 400, "limit"),
        ("/jobs", {"status": "exploded"}, 400, "status"),
        ("/jobs", {"from": "not-a-date"}, 400, "from"),
        ("/jobs", {"from": "2026-11-05", "to": "2026-11-01"}, 400, "from"),
        ("/jobs", {"next_token": "garbage"}, 400, "next_token"),
    ],
)
def test_bad_requests_get_a_4xx_naming_the_problem(
    aws: dict[str, Any], path: str, query: dict[str, str] | None, status: int, names: str
) -> None:
    code, body = api(path, query)
    assert code == status
    assert body["statusCode"] == status and isinstance(body["message"], str)
    if status == 400:
        assert body["field"] == names, body
    assert names in json.dumps(body)


def test_a_stale_writer_is_refused_and_nothing_of_its_transaction_lands(
    aws: dict[str, Any],
) -> None:
    from shared.adapters.rollup_store import RollupChange
    from shared.adapters.table import ConditionFailed
    from shared.adapters.unit_of_work import UnitOfWork
    from shared.domain import accrual as acc

    send(aws, "e1", 0, "running")
    deps = runtime.ledger_deps()
    head = deps.instances.head("llama", "123456789012", aws["ids"]["llama"])
    assert head is not None
    delta = acc.Accrual().fixed(acc.INSTANCE, "s", 3600, 3600 * 1000)
    uow = UnitOfWork(deps.table)
    deps.instances.stage_head(uow, head, head.version - 1)  # another writer moved it on
    deps.rollups.stage(uow, RollupChange("llama", "123456789012", delta))
    with pytest.raises(ConditionFailed):
        uow.commit()
    aws["clock"].advance_to(T0 + timedelta(hours=1))
    _, body = api("/jobs/llama")
    assert Decimal(body["cost_usd"]["instance"]) == Decimal("21.5")  # no $1,000 landed


def test_jobs_and_open_instances_answer_without_scan(aws: dict[str, Any]) -> None:
    from shared.services.job_view import active_between, all_rollups

    send(aws, "e1", 0, "running")
    deps = runtime.ledger_deps()
    rollups = all_rollups(deps.rollups)
    assert list(rollups) == ["llama"]
    assert active_between(rollups["llama"], date(2026, 11, 1), date(2026, 11, 1), T0)
    assert [h.job_id for h in deps.instances.open_heads()] == ["llama"]


def test_day_boundary_and_backfill_handlers_run_on_schedule_events(aws: dict[str, Any]) -> None:
    from functions.day_boundary.handler import handler as day_boundary
    from shared.services.job_view import active_between, all_rollups

    send(aws, "e1", 0, "running")
    event = scheduled_event("s1", "2026-11-02T00:00:00Z")
    assert day_boundary(event, FakeLambdaContext("test")) == {"day": "2026-11-02", "jobs_marked": 1}
    rollups = all_rollups(runtime.ledger_deps().rollups)["llama"]
    later = datetime(2026, 11, 2, 1, tzinfo=UTC)
    assert active_between(rollups, date(2026, 11, 2), date(2026, 11, 2), later)


def test_summaries_api_reads_stored_days_and_rejects_bad_ranges(aws: dict[str, Any]) -> None:
    from shared.services.summaries import summarize_day

    send(aws, "e1", 0, "running")
    ledger = SummaryStore(DynamoTable(aws["client"], TABLE))
    summary, _ = summarize_day(runtime.ledger_deps(), date(2026, 11, 1), T0 + timedelta(days=1))
    ledger.put_summary(date(2026, 11, 1), summary)
    status, body = api("/summaries/2026-11-01")
    assert status == 200 and body["total_usd"] == summary["total_usd"]
    status, body = api("/summaries", {"from": "2026-11-01", "to": "2026-11-02", "group_by": "team"})
    assert status == 200
    # Every breakdown adds up: spend without the key is its (none) entry (none here).
    assert body["days"][0]["by_tag"] == {"nlp": summary["total_usd"], "(none)": "0.000000000"}
    assert body["days"][1] == {"date": "2026-11-02", "available": False}
    assert api("/summaries/2026-11-09")[0] == 404
    assert api("/summaries", {"from": "2026-11-02", "to": "2026-11-01"})[0] == 400
    assert (
        api("/summaries", {"from": "2026-11-01", "to": "2026-11-02", "group_by": "colour"})[0]
        == 400
    )


NLP = "arn:aws:sts::123456789012:assumed-role/ml-nlp-dev/ana"
VISION = "arn:aws:sts::123456789012:assumed-role/ml-vision-dev/ben"
FINANCE = "arn:aws:sts::123456789012:assumed-role/finops/carla"
ACCESS = {
    "rules": [
        {"arn_pattern": "arn:aws:sts::*:assumed-role/ml-nlp-*/*", "role": "team", "team": "nlp"},
        {
            "arn_pattern": "arn:aws:sts::*:assumed-role/ml-vision-*/*",
            "role": "team",
            "team": "vision",
        },
        {"arn_pattern": "arn:aws:sts::*:assumed-role/finops/*", "role": "finance"},
    ]
}


@pytest.fixture
def with_access(aws: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    config = CONFIG.model_copy(update={"access": CONFIG.access.model_validate(ACCESS)})
    monkeypatch.setenv("LEDGER_CONFIG", config.model_dump_json())
    runtime.reset()
    send(aws, "e1", 0, "running", "llama")  # team nlp
    send(aws, "e2", 60, "running", "vit")  # team vision
    return aws


def test_a_team_member_cannot_read_another_teams_job(with_access: dict[str, Any]) -> None:
    assert api("/jobs/llama", arn=NLP)[0] == 200
    status, body = api("/jobs/vit", arn=NLP)
    assert status == 403 and "not visible to team nlp" in body["message"]
    # An unknown job gets the very same answer: no leak of whether it exists.
    status, unknown = api("/jobs/does-not-exist", arn=NLP)
    assert status == 403
    assert unknown["message"].replace("does-not-exist", "vit") == body["message"]


def test_finance_reads_every_job_and_unknown_is_404(with_access: dict[str, Any]) -> None:
    assert api("/jobs/vit", arn=FINANCE)[0] == 200
    assert api("/jobs/llama", arn=FINANCE)[0] == 200
    assert api("/jobs/does-not-exist", arn=FINANCE)[0] == 404


def test_listing_is_limited_to_the_callers_team(with_access: dict[str, Any]) -> None:
    status, body = api("/jobs", arn=VISION)
    assert status == 200 and [j["job_id"] for j in body["jobs"]] == ["vit"]
    assert api("/jobs", {"team": "nlp"}, arn=VISION)[0] == 403
    status, body = api("/jobs", arn=FINANCE)
    assert sorted(j["job_id"] for j in body["jobs"]) == ["llama", "vit"]


def test_unknown_callers_and_team_members_on_finance_views_get_403(
    with_access: dict[str, Any],
) -> None:
    status, body = api("/jobs", arn="arn:aws:iam::123456789012:user/mallory")
    assert status == 403 and "matches no rule of ledger.access.rules" in body["message"]
    status, body = api("/summaries", {"from": "2026-11-01", "to": "2026-11-01"}, arn=NLP)
    assert status == 403 and "finance" in body["message"]
    assert api("/summaries", {"from": "2026-11-01", "to": "2026-11-01"}, arn=FINANCE)[0] == 200


def test_items_timeline_compare_and_prices(aws: dict[str, Any]) -> None:
    send(aws, "e1", 0, "running", "llama")
    send(aws, "e2", 0, "running", "vit")
    send(aws, "e3", 1800, "stopped", "vit")
    aws["clock"].advance_to(T0 + timedelta(hours=1))
    status, body = api("/jobs/vit/items")
    assert status == 200 and [i["kind"] for i in body["items"]] == ["segment"]
    assert body["items"][0]["billed_seconds"] == 1800
    status, body = api("/jobs/llama/timeline", {"points": "3"})
    assert status == 200
    # $21.50/h plus the 100 GiB gp3 volume at $0.08/GB-month (snapshot price)
    assert [p["total_usd"] for p in body["points"]] == [
        "0.000000000",
        "10.755555556",
        "21.511111111",
    ]
    status, body = api("/compare", {"jobs": "llama,vit"})
    assert status == 200 and [j["job_id"] for j in body["jobs"]] == ["llama", "vit"]
    assert body["jobs"][0]["accelerators"] == ["Neuron (Trainium/Inferentia)"]
    assert any("tokens" in note for note in body["notes"])
    assert api("/compare", {"jobs": "llama"})[0] == 400
    status, body = api("/prices", {"instance_type": "trn1.32xlarge"})
    assert status == 200 and body["source"] == "override"
    status, body = api("/prices", {"instance_type": "trn2.48xlarge"})
    assert status == 404 and "trn2.48xlarge" in body["message"]


@pytest.mark.parametrize(
    ("path", "query", "most"),
    [
        # the job's partition (its sealed records only when the question reaches them)
        ("/jobs/llama", None, 1),
        ("/jobs/llama/items", None, 2),
        ("/jobs/llama/timeline", {"points": "5"}, 2),
        ("/jobs/llama/estimate", {"target_steps": "10"}, 1),
        ("/jobs/llama/efficiency", None, 1),
        ("/compare", {"jobs": "llama,vit"}, 2),
        # every rollup in one Query (whatever the range), then one Query per job listed
        ("/jobs", {"from": "2026-11-01", "to": "2026-11-07", "limit": "1"}, 2),
        ("/jobs", {"team": "nlp"}, 2),
        ("/efficiency", {"team": "nlp"}, 2),
        ("/budgets", None, 2),
        ("/summaries", {"from": "2026-11-01", "to": "2026-11-03"}, 1),
        ("/summaries/2026-11-01", None, 1),
        ("/reconciliations/2026-11-01", None, 1),
        ("/prices", {"instance_type": "trn1.32xlarge"}, 0),
    ],
)
def test_each_endpoint_reads_dynamodb_a_bounded_number_of_times(
    aws: dict[str, Any],
    call_counter: CallCounter,
    path: str,
    query: dict[str, str] | None,
    most: int,
) -> None:
    send(aws, "e1", 0, "running", "llama")
    send(aws, "e2", 0, "running", "vit")
    aws["clock"].advance_to(T0 + timedelta(hours=1))
    call_counter.calls.clear()
    status, _ = api(path, query)
    assert status < 500
    assert call_counter.count("dynamodb", "Scan") == 0
    assert call_counter.count("dynamodb") <= most, call_counter.calls


def _ordered(value: Any) -> Any:
    """A document with each object's keys in order (dict equality ignores the order)."""
    if isinstance(value, dict):
        return [(k, _ordered(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_ordered(v) for v in value]
    return value


def test_typed_responses_keep_the_views_documents_key_for_key(aws: dict[str, Any]) -> None:
    """The response models (shared.api.models) change no body: the same keys, in the same
    order, with the same values as the views' documents."""
    from shared.adapters.job_records import load_job
    from shared.reports.views import job_detail, job_line_items, job_summary
    from shared.services.job_view import get_job_cost

    send(aws, "e1", 0, "running")
    send(aws, "e2", 5400, "stopped")
    send(aws, "e3", 60, "running", job="vit")
    aws["clock"].advance_to(T0 + timedelta(hours=3))
    now = aws["clock"].now()
    deps = runtime.ledger_deps()
    llama = get_job_cost(deps, "llama", now)
    records = load_job(deps.table, deps.rollups, "llama")
    assert records is not None
    expected = {
        "/jobs/llama": job_detail(llama),
        "/jobs/llama/items": {
            "job_id": "llama",
            "items": job_line_items(llama, records, now),
            "next_token": None,
        },
    }
    for path, document in expected.items():
        status, body = api(path)
        assert status == 200, body
        assert _ordered(body) == _ordered(json.loads(json.dumps(document))), path
    status, body = api("/jobs", {"sort": "start"})
    assert status == 200
    jobs = [job_summary(get_job_cost(deps, j, now)) for j in ("llama", "vit")]
    assert _ordered(body["jobs"]) == _ordered(json.loads(json.dumps(jobs)))
    assert list(body) == ["jobs", "next_token", "from", "to"]
