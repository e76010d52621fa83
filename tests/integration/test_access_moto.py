"""Access fails closed; budget changes are recorded; teams are found by their own tag key.

The job-cost API handler against moto, called as API Gateway would call it (the
caller's IAM ARN in requestContext.identity.userArn).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from costtracker.lambda_context import FakeLambdaContext
from costtracker.local_api import proxy_event
from shared.adapters import ledger_schema
from shared.app import runtime
from shared.config.ledger import AccountsConfig, LedgerConfig
from shared.domain.clock import FixedClock
from tests.aws_events import ec2_state_event
from tests.support import moto_instance

T0 = datetime(2026, 11, 1, 10, tzinfo=UTC)
TABLE = "ledger-access"
OPENAPI = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"

ADMIN = "arn:aws:sts::123456789012:assumed-role/Admin/root-ish"
FINANCE = "arn:aws:sts::123456789012:assumed-role/finops/carla"
NLP = "arn:aws:sts::123456789012:assumed-role/ml-nlp-dev/ana"
VISION = "arn:aws:sts::123456789012:assumed-role/ml-vision-dev/ben"
POWER_USER = "arn:aws:sts::123456789012:assumed-role/PowerUserAccess/mallory"
RULES = [
    {"arn_pattern": "arn:aws:sts::*:assumed-role/Admin/*", "role": "admin"},
    {"arn_pattern": "arn:aws:sts::*:assumed-role/finops/*", "role": "finance"},
    {"arn_pattern": "arn:aws:sts::*:assumed-role/ml-nlp-*/*", "role": "team", "team": "nlp"},
    {"arn_pattern": "arn:aws:sts::*:assumed-role/ml-vision-*/*", "role": "team", "team": "vision"},
]
CONTEXT_BUDGET = {"budget_id": "all", "scope": {"account": True}, "amount_usd": "1000"}

# Every operation of the API, with valid parameters (checked against docs/openapi.json).
ROUTES = [
    ("GET", "/jobs", None),
    ("GET", "/jobs/llama", None),
    ("GET", "/jobs/llama/items", None),
    ("GET", "/jobs/llama/timeline", None),
    ("GET", "/jobs/llama/estimate?target_steps=10", None),
    ("GET", "/jobs/llama/efficiency", None),
    ("GET", "/compare?jobs=llama,vit", None),
    ("GET", "/idle", None),
    ("GET", "/efficiency?team=nlp", None),
    ("GET", "/change?from0=2026-10-25&to0=2026-10-31&from1=2026-11-01&to1=2026-11-07", None),
    ("GET", "/prices?instance_type=trn1.32xlarge", None),
    ("GET", "/budgets", None),
    ("GET", "/budgets/all", None),
    ("PUT", "/budgets/nlp", {"scope": {"tag": {"squad": "nlp"}}, "amount_usd": "10"}),
    ("DELETE", "/budgets/nlp", None),
    ("GET", "/budgets/all/history", None),
    ("POST", "/budgets/all/actions/all:2026-11:100:stop_now/release", None),
    ("GET", "/summaries/2026-11-01", None),
    ("GET", "/summaries?from=2026-11-01&to=2026-11-02", None),
    ("GET", "/reconciliations/2026-11-01", None),
    ("GET", "/accounts", None),
]


def _config(rules: list[dict[str, Any]]) -> LedgerConfig:
    return LedgerConfig.model_validate({
        "live_prices": False,
        "prices": {"ec2": {"trn1.32xlarge": "21.50"}},
        "tracking": {"grouping_tag_keys": ["project", "squad", "owner"]},
        "access": {"rules": rules, "team_tag_key": "squad"},
        "budgets": [CONTEXT_BUDGET],
    })  # fmt: skip


def use_config(monkeypatch: pytest.MonkeyPatch, config: LedgerConfig) -> None:
    monkeypatch.setenv("LEDGER_CONFIG", config.model_dump_json())
    runtime.reset()  # the settings again, the same clock


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """Two jobs, tagged with the custom team key `squad` (no `team` tag at all)."""
    with mock_aws():
        boto3.client("dynamodb", region_name="us-east-1").create_table(
            **ledger_schema.create_table_request(TABLE)
        )
        ec2 = boto3.client("ec2", region_name="us-east-1")
        ids = {}
        for job, squad in (("llama", "nlp"), ("vit", "vision")):
            ids[job] = moto_instance(
                ec2, "trn1.32xlarge", {"training-job": job, "squad": squad, "project": "foundation"}
            )
        monkeypatch.setenv("TABLE_NAME", TABLE)
        use_config(monkeypatch, _config(RULES))
        clock = FixedClock(T0)
        with runtime.override(clock):
            from functions.instance_state.handler import handler

            for n, job in enumerate(ids):
                handler(ec2_state_event(f"e{n}", ids[job], "running", "2026-11-01T10:00:00Z"),
                        FakeLambdaContext("test"))  # fmt: skip
            clock.advance_to(T0 + timedelta(hours=1))
            yield {"clock": clock}


def call(method: str, path: str, arn: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    from functions.job_cost_api.handler import handler

    event = proxy_event(method, path, {"Content-Type": "application/json"},
                        json.dumps(body) if body is not None else None, user_arn=arn)  # fmt: skip
    response = handler(event, FakeLambdaContext("test"))  # type: ignore[arg-type]
    return int(response["statusCode"]), json.loads(response["body"])


def test_routes_cover_every_operation_of_the_api() -> None:
    document = json.loads(OPENAPI.read_text())
    operations = {
        (method.upper(), path) for path, item in document["paths"].items() for method in item
    }
    covered = set()
    for method, raw, _ in ROUTES:
        path = raw.split("?")[0]
        for template_method, template in operations:
            parts, pattern = path.strip("/").split("/"), template.strip("/").split("/")
            if (
                template_method == method
                and len(parts) == len(pattern)
                and all(p == t or t.startswith("{") for p, t in zip(parts, pattern, strict=True))
            ):
                covered.add((template_method, template))
    assert covered == operations


@pytest.fixture
def closed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No table and no AWS at all (a closed port): a refusal must come first."""
    monkeypatch.setenv("TABLE_NAME", TABLE)
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "none")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "none")
    runtime.reset()
    yield
    runtime.reset()


@pytest.mark.parametrize(("method", "path", "body"), ROUTES, ids=[f"{m} {p}" for m, p, _ in ROUTES])
def test_every_route_refuses_callers_without_a_rule_naming_the_setting(
    closed: None, monkeypatch: pytest.MonkeyPatch,
    method: str, path: str, body: dict[str, Any] | None,
) -> None:  # fmt: skip
    # No rules at all: nobody, not even an Admin role, and the answer says what grants access.
    use_config(monkeypatch, _config([]))
    for arn in (POWER_USER, ADMIN):
        status, answer = call(method, path, arn, body)
        assert status == 403, answer
        # The API's one error shape (shared.api.errors), declared for the route.
        assert answer["statusCode"] == 403 and answer["field"] is None
        assert answer["errors"] == [{"field": None, "message": answer["message"]}]
        message = answer["message"]
        assert "ledger.access" in message and "admin, finance and team" in message
    # Rules, none of which matches (e.g. PowerUserAccess has execute-api:Invoke).
    use_config(monkeypatch, _config(RULES))
    status, answer = call(method, path, POWER_USER, body)
    assert status == 403 and "ledger.access.rules" in answer["message"]


def test_a_team_member_lists_exactly_their_teams_jobs_by_the_custom_tag(
    aws: dict[str, Any],
) -> None:
    status, body = call("GET", "/jobs", NLP)
    assert status == 200 and [j["job_id"] for j in body["jobs"]] == ["llama"]
    status, body = call("GET", "/jobs", VISION)
    assert status == 200 and [j["job_id"] for j in body["jobs"]] == ["vit"]
    assert call("GET", "/jobs?team=vision", NLP)[0] == 403
    assert call("GET", "/jobs/vit", NLP)[0] == 403
    status, body = call("GET", "/jobs?team=vision", FINANCE)
    assert status == 200 and [j["job_id"] for j in body["jobs"]] == ["vit"]
    status, body = call("GET", "/jobs", FINANCE)
    assert sorted(j["job_id"] for j in body["jobs"]) == ["llama", "vit"]


def test_budget_writes_need_finance_or_admin(aws: dict[str, Any]) -> None:
    budget = {"scope": {"tag": {"squad": "nlp"}}, "amount_usd": "10"}
    status, body = call("PUT", "/budgets/nlp", NLP, budget)
    assert status == 403 and "finance and admins" in body["message"]
    assert call("PUT", "/budgets/nlp", FINANCE, budget)[0] == 200
    assert call("DELETE", "/budgets/nlp", VISION)[0] == 403
    assert call("DELETE", "/budgets/nlp", ADMIN)[0] == 200


def test_budget_recipients_are_shown_to_finance_and_admins_only(aws: dict[str, Any]) -> None:
    """A team member sees their team's budget and its spend, not people's addresses."""
    budget = {"scope": {"tag": {"squad": "nlp"}}, "amount_usd": "10", "recipients": ["cfo@x.io"]}
    assert call("PUT", "/budgets/nlp", FINANCE, budget)[0] == 200

    def listed(arn: str) -> dict[str, Any]:
        status, body = call("GET", "/budgets", arn)
        assert status == 200, body
        return {b["budget_id"]: b for b in body["budgets"]}

    assert listed(NLP)["nlp"]["recipients"] is None
    assert "cfo@x.io" not in json.dumps(listed(NLP))
    assert listed(FINANCE)["nlp"]["recipients"] == ["cfo@x.io"]
    assert listed(ADMIN)["nlp"]["recipients"] == ["cfo@x.io"]


def test_every_budget_change_is_in_its_history_with_the_callers_arn(aws: dict[str, Any]) -> None:
    first = {"scope": {"tag": {"squad": "nlp"}}, "amount_usd": "10"}
    assert call("PUT", "/budgets/nlp", FINANCE, first)[0] == 200
    aws["clock"].advance_to(T0 + timedelta(hours=2))
    assert call("PUT", "/budgets/nlp", FINANCE, {**first, "amount_usd": "25"})[0] == 200
    aws["clock"].advance_to(T0 + timedelta(hours=3))
    assert call("DELETE", "/budgets/nlp", ADMIN)[0] == 200
    status, body = call("GET", "/budgets/nlp/history", FINANCE)
    assert status == 200
    changes = body["changes"]
    assert [(c["action"], c["who"], c["at"]) for c in changes] == [
        ("create", FINANCE, "2026-11-01T11:00:00Z"),
        ("update", FINANCE, "2026-11-01T12:00:00Z"),
        ("delete", ADMIN, "2026-11-01T13:00:00Z"),
    ]
    assert changes[0]["before"] is None and Decimal(changes[0]["after"]["amount_usd"]) == 10
    assert Decimal(changes[1]["before"]["amount_usd"]) == 10
    assert Decimal(changes[1]["after"]["amount_usd"]) == 25
    assert Decimal(changes[2]["before"]["amount_usd"]) == 25 and changes[2]["after"] is None
    assert call("GET", "/budgets/nlp", FINANCE)[0] == 404
    assert call("DELETE", "/budgets/nlp", ADMIN)[0] == 404  # already gone
    assert call("GET", "/budgets/nlp/history", NLP)[0] == 403


def test_context_budgets_cannot_be_deleted_or_changed_through_the_api(
    aws: dict[str, Any],
) -> None:
    status, body = call("DELETE", "/budgets/all", ADMIN)
    assert status == 409 and "ledger.budgets" in body["message"]
    assert body["statusCode"] == 409 and body["field"] == "budget_id"
    status, body = call("PUT", "/budgets/all", ADMIN, {"scope": {"account": True},
                                                        "amount_usd": "1"})  # fmt: skip
    assert status == 409 and "CDK context" in body["message"]
    status, body = call("GET", "/budgets/all", FINANCE)
    assert status == 200 and body["amount_usd"] == "1000" and body["source"] == "context"
    assert call("GET", "/budgets/all/history", FINANCE) == (200, {"budget_id": "all",
                                                                   "changes": []})  # fmt: skip


def test_the_refusals_are_declared_in_the_openapi_document() -> None:
    from costtracker.openapi import schema

    document = schema()
    assert json.loads(OPENAPI.read_text()) == document  # `make openapi` shows no drift
    error = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
    for path, item in document["paths"].items():
        for method, operation in item.items():
            responses = operation["responses"]
            assert responses["403"]["content"] == error["content"], (method, path)
            assert "ledger.access" in responses["403"]["description"]
            declares_409 = path == "/budgets/{budget_id}" and method in ("put", "delete")
            assert ("409" in responses) == declares_409, (method, path)
    history = document["paths"]["/budgets/{budget_id}/history"]["get"]["responses"]
    assert {"200", "400", "403", "404"} <= set(history)


def test_member_accounts_health_is_for_admins_only(
    aws: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from shared.adapters.account_store import AccountStore

    config = _config(RULES).model_copy(
        update={"accounts": AccountsConfig(allowed_accounts=("222222222222", "333333333333"))}
    )
    use_config(monkeypatch, config)
    monkeypatch.setenv("TRACKER_ACCOUNT", "123456789012")
    store = AccountStore(runtime.current().table)
    store.saw_event("222222222222", "ec2_state", T0)
    store.swept("222222222222", "us-east-1", T0, alarms=4)
    store.failed("222222222222", T0 + timedelta(minutes=5), "instances:p1: Throttling", None)
    for arn in (FINANCE, NLP):
        status, body = call("GET", "/accounts", arn)
        assert status == 403 and "admins" in body["message"]
    status, body = call("GET", "/accounts", ADMIN)
    assert status == 200, body
    assert body["list_fetched_at"] is None
    first, never = body["accounts"]
    assert first == {
        "account": "222222222222",
        "events_last_seen": {"ec2_state": "2026-11-01T10:00:00Z"},
        "role_assumable": True,
        "role_checked_at": "2026-11-01T10:00:00Z",
        "last_sweep": {"us-east-1": "2026-11-01T10:00:00Z"},
        "alarms_in_place": {"us-east-1": 4},
        "last_error": "instances:p1: Throttling",
        "last_error_at": "2026-11-01T10:05:00Z",
    }
    # Allow-listed, never heard of: every field says so (null / empty), none made up.
    assert never == {
        "account": "333333333333",
        "events_last_seen": {},
        "role_assumable": None,
        "role_checked_at": None,
        "last_sweep": {},
        "alarms_in_place": {},
        "last_error": None,
        "last_error_at": None,
    }
