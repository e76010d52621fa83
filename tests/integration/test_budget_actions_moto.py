"""deny_launch against moto IAM, through the handlers: a budget set through the API
denies launches carrying its scope's tags once it crosses (a policy the tracker creates
under /costtracker/, attached to the configured principal), and the API's release (finance
and admins only) detaches it; a principal at its policy quota is reported, not retried."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from moto import mock_aws

from costtracker.lambda_context import FakeLambdaContext
from costtracker.local_api import LOCAL_CALLER_ARN, proxy_event, with_local_admin
from shared.adapters.launch_denial import PrincipalAtQuota
from shared.app import runtime
from shared.app.action_runtime import action_deps
from shared.config.ledger import LedgerConfig
from shared.domain.clock import FixedClock
from shared.services.budget_tick import run_tick
from tests.aws_events import ec2_state_event
from tests.support import moto_instance, moto_ledger

T0 = datetime(2026, 11, 1, tzinfo=UTC)
TABLE = "ledger-actions"
ROLE = "arn:aws:iam::123456789012:role/ml-nlp"
TEAM_CALLER = "arn:aws:sts::123456789012:assumed-role/nlp-dev/alice"
ACTION = "nlp-cap:total:100:deny_launch"
RELEASE = f"/budgets/nlp-cap/actions/{ACTION}/release"
CONFIG = LedgerConfig.model_validate(
    {
        "live_prices": False,
        "prices": {"ec2": {"trn1.32xlarge": "20"}},
        "budget_actions": {"enabled": True, "deny_principals": [ROLE]},
        "access": {"rules": [{"arn_pattern": TEAM_CALLER, "role": "team", "team": "nlp"}]},
    }
)
BUDGET = {
    "scope": {"tag": {"team": "nlp"}},
    "amount_usd": "10",
    "thresholds": [100],
    "actions": [{"at": 100, "do": "deny_launch", "dry_run": False}],
}


def api(method: str, path: str, body: Any = None, caller: str = LOCAL_CALLER_ARN) -> Any:
    from functions.job_cost_api.handler import handler

    headers = {"Content-Type": "application/json"}
    payload = json.dumps(body) if body is not None else None
    event = proxy_event(method, path, headers, payload, user_arn=caller)
    response = handler(event, FakeLambdaContext("test"))  # type: ignore[arg-type]
    return response["statusCode"], json.loads(response["body"])


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    with mock_aws():
        moto_ledger(monkeypatch, TABLE, with_local_admin(CONFIG.model_dump_json()))
        iam = boto3.client("iam", region_name="us-east-1")
        iam.create_role(RoleName="ml-nlp", AssumeRolePolicyDocument=json.dumps({"Statement": []}))
        ec2 = boto3.client("ec2", region_name="us-east-1")
        iid = moto_instance(ec2, "trn1.32xlarge", {"training-job": "nlp-job", "team": "nlp"})
        sns = boto3.client("sns", region_name="us-east-1")
        for audience in ("FINANCE", "TEAM", "ADMIN"):
            topic = sns.create_topic(Name=audience.lower())["TopicArn"]
            monkeypatch.setenv(f"{audience}_TOPIC_ARN", topic)
        clock = FixedClock(T0)
        with runtime.override(clock):
            from functions.instance_state.handler import handler

            handler(ec2_state_event("e1", iid, "running", T0), FakeLambdaContext("test"))
            assert api("PUT", "/budgets/nlp-cap", BUDGET)[0] == 200
            yield {"iam": iam, "clock": clock}


def tick(at: datetime) -> list[str]:
    rt = runtime.current()
    config = rt.settings.config
    result = run_tick(
        rt.ledger_deps(), rt.budget_store, config, rt.notifier, at, lambda: 50.0, action_deps(rt)
    )
    return result.alerts


def attached(iam: Any) -> list[dict[str, str]]:
    return list(iam.list_attached_role_policies(RoleName="ml-nlp")["AttachedPolicies"])


def test_deny_launch_is_attached_at_the_crossing_and_released_through_the_api(
    aws: dict[str, Any],
) -> None:
    iam = aws["iam"]
    assert not [a for a in tick(T0 + timedelta(minutes=20)) if a.startswith("action:")]  # $6.67
    assert attached(iam) == []
    aws["clock"].advance_to(T0 + timedelta(minutes=31))
    assert f"action:{ACTION}" in tick(T0 + timedelta(minutes=31))  # $10.33
    (policy,) = attached(iam)
    arn = policy["PolicyArn"]
    assert (
        arn
        == "arn:aws:iam::123456789012:policy/costtracker/deny-launch-nlp-cap-total-100-deny_launch"
    )
    version = iam.get_policy(PolicyArn=arn)["Policy"]["DefaultVersionId"]
    document = iam.get_policy_version(PolicyArn=arn, VersionId=version)["PolicyVersion"]
    statements = document["Document"]["Statement"]
    assert [s["Action"] for s in statements] == [
        ["ec2:RunInstances", "sagemaker:CreateTrainingJob"],
        ["ec2:CreateTags"],
    ]
    for statement in statements:
        assert statement["Effect"] == "Deny"
        assert statement["Condition"] == {"StringEquals": {"aws:RequestTag/team": "nlp"}}
    # Idempotent: another tick attaches nothing more.
    tick(T0 + timedelta(minutes=32))
    assert [p["PolicyArn"] for p in attached(iam)] == [arn]

    # A team member cannot release it (nor do anything else that stops or starts).
    status, refused = api("POST", RELEASE, caller=TEAM_CALLER)
    assert status == 403 and "finance and admins" in refused["message"]
    assert [p["PolicyArn"] for p in attached(iam)] == [arn]

    aws["clock"].advance_to(T0 + timedelta(minutes=40))
    status, released = api("POST", RELEASE)
    assert status == 200
    assert (released["state"], released["detached"], released["kind"]) == (
        "released",
        True,
        "deny_launch",
    )
    assert released["released_by"] == LOCAL_CALLER_ARN
    assert attached(iam) == []
    # Suppressed for the rest of the period: later ticks attach nothing again; the next
    # tick deletes the detached policy.
    tick(T0 + timedelta(minutes=41))
    assert attached(iam) == []
    with pytest.raises(iam.exceptions.NoSuchEntityException):
        iam.get_policy(PolicyArn=arn)
    assert api("POST", RELEASE)[1]["state"] == "released"  # releasing again: the same
    assert api("POST", "/budgets/nlp-cap/actions/nlp-cap:total:100:stop_now/release")[0] == 404


class AtQuota:
    """A LaunchDenial whose principal holds as many policies as IAM allows."""

    via = "iam"

    def __init__(self) -> None:
        self.attaches = 0
        self.deleted: list[str] = []

    def ensure_policy(self, action_id: str, tags: Mapping[str, str], account: str) -> str:
        return "arn:aws:iam::123456789012:policy/costtracker/deny"

    def delete_policy(self, policy: str) -> None:
        self.deleted.append(policy)  # made, never attached: deleted once it is final

    def attach(self, policy_arn: str, principal_arn: str) -> None:
        self.attaches += 1
        raise PrincipalAtQuota(f"{principal_arn}: LimitExceeded")

    def detach(self, policy_arn: str, principal_arn: str) -> None:
        raise AssertionError("nothing was attached")


def test_a_principal_at_its_policy_quota_is_reported_not_retried(aws: dict[str, Any]) -> None:
    denial = AtQuota()
    with runtime.override(aws["clock"], runtime.Sources(launch_denial=denial)):
        aws["clock"].advance_to(T0 + timedelta(minutes=31))
        tick(T0 + timedelta(minutes=31))
        tick(T0 + timedelta(minutes=32))
        tick(T0 + timedelta(minutes=33))
        assert denial.attaches == 1
        assert denial.deleted == ["arn:aws:iam::123456789012:policy/costtracker/deny"]
        status, listed = api("GET", "/budgets/nlp-cap")
        assert status == 200
        assert listed["actions"] == [
            {"at": 100, "do": "deny_launch", "dry_run": False, "grace_minutes": None}
        ]
    record = runtime.current().table.get("ACTIONS", ACTION)
    assert record is not None and record["state"] == "failed"
    assert "LimitExceeded" in record["detail"]


def test_raising_the_budget_lifts_the_deny_reading_only_what_is_attached(
    aws: dict[str, Any],
) -> None:
    """The lift reads the budget's attached denials (one small record each), never its
    actions of every period; a raise above the threshold lifts the deny at the next tick."""
    iam = aws["iam"]
    aws["clock"].advance_to(T0 + timedelta(minutes=31))
    tick(T0 + timedelta(minutes=31))
    assert len(attached(iam)) == 1
    store = action_deps(runtime.current()).store
    assert store.attached("nlp-cap") == [ACTION]

    assert api("PUT", "/budgets/nlp-cap", {**BUDGET, "amount_usd": "100"})[0] == 200
    aws["clock"].advance_to(T0 + timedelta(minutes=33))
    tick(T0 + timedelta(minutes=33))
    assert attached(iam) == []
    record = store.get(ACTION)
    assert record is not None
    assert (record.state, record.released_by) == ("released", "budget raised")
    assert store.attached("nlp-cap") == []


def test_a_deny_attached_before_parts_were_recorded_is_still_lifted(
    aws: dict[str, Any],
) -> None:
    """A record from before each principal had its own part (the policy in the tracker's
    account, on its deny_principals there) is detached all the same."""
    iam = aws["iam"]
    aws["clock"].advance_to(T0 + timedelta(minutes=31))
    tick(T0 + timedelta(minutes=31))
    (arn,) = [p["PolicyArn"] for p in attached(iam)]
    table = boto3.client("dynamodb", region_name="us-east-1")
    parts = table.query(
        TableName=TABLE,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": f"ACTION#{ACTION}"}},
    )["Items"]
    assert [p["kind"]["S"] for p in parts] == ["deny_principal"]
    for part in parts:
        table.delete_item(TableName=TABLE, Key={"pk": part["pk"], "sk": part["sk"]})
    assert api("PUT", "/budgets/nlp-cap", {**BUDGET, "amount_usd": "100"})[0] == 200
    aws["clock"].advance_to(T0 + timedelta(minutes=33))
    tick(T0 + timedelta(minutes=33))
    assert attached(iam) == []
    record = action_deps(runtime.current()).store.get(ACTION)
    assert record is not None and record.state == "released" and record.policy_arn == arn


@pytest.mark.parametrize("how", ["deleted", "rule removed"])
def test_a_deny_whose_budget_is_gone_is_lifted_within_the_hour(
    aws: dict[str, Any], how: str
) -> None:
    """``lift_denials`` sees only budgets that deny; the hourly pass over the attached
    denials lifts one whose budget was deleted or lost its deny_launch rule: detached,
    released ("budget removed"), its policy deleted."""
    iam = aws["iam"]
    aws["clock"].advance_to(T0 + timedelta(minutes=31))
    assert f"action:{ACTION}" in tick(T0 + timedelta(minutes=31))
    (policy,) = attached(iam)
    if how == "deleted":
        assert api("DELETE", "/budgets/nlp-cap")[0] in (200, 204)
    else:
        assert api("PUT", "/budgets/nlp-cap", {**BUDGET, "actions": []})[0] == 200
    later = T0 + timedelta(minutes=32)
    aws["clock"].advance_to(later)
    tick(later)  # within the hour of the pass that saw it attached: not looked at yet
    assert [p["PolicyArn"] for p in attached(iam)] == [policy["PolicyArn"]]
    hour = T0 + timedelta(minutes=95)
    aws["clock"].advance_to(hour)
    assert f"action:{ACTION}" in tick(hour)
    assert attached(iam) == []
    with pytest.raises(iam.exceptions.NoSuchEntityException):
        iam.get_policy(PolicyArn=policy["PolicyArn"])
    assert not [a for a in tick(hour + timedelta(hours=2)) if a.startswith("action:")]
