"""deny_launch across an organisation on moto, through the budget tick and the API:
an IAM deny made in each principal's own account (a member's through its member role),
one failing account never stopping the others; and an SCP on the scope's member
accounts, never on the management account, detached and deleted when lifted."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from costtracker.lambda_context import FakeLambdaContext
from costtracker.local_api import LOCAL_CALLER_ARN, proxy_event, with_local_admin
from shared.adapters import ledger_schema
from shared.adapters.accounts import AccountClients, boto3_client
from shared.app import runtime
from shared.app.action_runtime import action_deps
from shared.config.ledger import LedgerConfig
from shared.domain.clock import FixedClock
from shared.services.budget_tick import run_tick
from tests.aws_events import ec2_state_event

T0 = datetime(2026, 11, 1, tzinfo=UTC)
TABLE = "ledger-denials"
HOME, MEMBER, GONE = "123456789012", "222222222222", "333333333333"
ACTION = "nlp-cap:total:100:deny_launch"
BUDGET = {
    "scope": {"tag": {"team": "nlp"}},
    "amount_usd": "10",
    "thresholds": [100],
    "actions": [{"at": 100, "do": "deny_launch", "dry_run": False}],
}
ROLE = "role/ml-nlp"


def api(method: str, path: str, body: Any = None) -> tuple[int, Any]:
    from functions.job_cost_api.handler import handler

    payload = json.dumps(body) if body is not None else None
    headers = {"Content-Type": "application/json"}
    event = proxy_event(method, path, headers, payload, user_arn=LOCAL_CALLER_ARN)
    response = handler(event, FakeLambdaContext("test"))  # type: ignore[arg-type]
    return response["statusCode"], json.loads(response["body"])


def tick(clock: FixedClock, at: datetime) -> None:
    rt = runtime.current()
    clock.advance_to(at)
    deps = action_deps(rt)
    config = rt.settings.config
    run_tick(rt.ledger_deps(), rt.budget_store, config, rt.notifier, at, lambda: 50.0, deps)


@pytest.fixture
def factory() -> Iterator[AccountClients]:
    with mock_aws():
        boto3.setup_default_session()
        boto3.client("dynamodb", region_name="us-east-1").create_table(
            **ledger_schema.create_table_request(TABLE)
        )
        yield AccountClients(
            lambda s, r, c: boto3_client(s, r, c),
            home_account=HOME,
            role_name="costtracker-member-read",
            default_region="us-east-1",
        )
        boto3.setup_default_session()


def _start(monkeypatch: pytest.MonkeyPatch, config: dict[str, Any], stack: ExitStack) -> FixedClock:
    """The ledger with one nlp instance running in the tracker's account since T0 (at
    $20/h it crosses $10 at T0 + 30 min) and the capped budget set through the API."""
    ec2 = boto3.client("ec2", region_name="us-east-1")
    tags = [{"Key": "training-job", "Value": "nlp-job"}, {"Key": "team", "Value": "nlp"}]
    iid = ec2.run_instances(
        ImageId="ami-12c6146b",
        MinCount=1,
        MaxCount=1,
        InstanceType="trn1.32xlarge",
        TagSpecifications=[{"ResourceType": "instance", "Tags": tags}],
    )["Instances"][0]["InstanceId"]
    sns = boto3.client("sns", region_name="us-east-1")
    for audience in ("FINANCE", "TEAM", "ADMIN"):
        monkeypatch.setenv(f"{audience}_TOPIC_ARN", sns.create_topic(Name=audience)["TopicArn"])
    settings = {"live_prices": False, "prices": {"ec2": {"trn1.32xlarge": "20"}}, **config}
    ledger = LedgerConfig.model_validate(settings).model_dump_json()
    monkeypatch.setenv("TABLE_NAME", TABLE)
    monkeypatch.setenv("TRACKER_ACCOUNT", HOME)
    monkeypatch.setenv("LEDGER_CONFIG", with_local_admin(ledger))
    clock = FixedClock(T0)
    stack.enter_context(runtime.override(clock))
    from functions.instance_state.handler import handler

    handler(ec2_state_event("e1", iid, "running", T0), FakeLambdaContext("test"))
    assert api("PUT", "/budgets/nlp-cap", BUDGET)[0] == 200
    return clock


@pytest.fixture
def stack() -> Iterator[ExitStack]:
    with ExitStack() as entered:
        yield entered


def _attached(iam: Any) -> list[str]:
    listed = iam.list_attached_role_policies(RoleName="ml-nlp")["AttachedPolicies"]
    return [p["PolicyArn"] for p in listed]


def _policy_gone(iam: Any, arn: str) -> bool:
    try:
        iam.get_policy(PolicyArn=arn)
    except ClientError as exc:
        return bool(exc.response["Error"]["Code"] == "NoSuchEntity")
    return False


def test_each_principal_is_denied_in_its_own_account_one_failing_never_stops_the_others(
    factory: AccountClients, monkeypatch: pytest.MonkeyPatch, stack: ExitStack
) -> None:
    trust = json.dumps({"Statement": []})
    home_iam, member_iam = (factory.client_for("iam", a) for a in (HOME, MEMBER))
    for iam in (home_iam, member_iam):
        iam.create_role(RoleName="ml-nlp", AssumeRolePolicyDocument=trust)
    principals = [f"arn:aws:iam::{a}:{ROLE}" for a in (HOME, MEMBER, GONE)]  # none in GONE
    accounts = {"allowed_accounts": [MEMBER, GONE]}
    actions = {"enabled": True, "deny_principals": principals}
    clock = _start(monkeypatch, {"accounts": accounts, "budget_actions": actions}, stack)

    tick(clock, T0 + timedelta(minutes=31))
    name = "policy/costtracker/deny-launch-nlp-cap-total-100-deny_launch"
    home_arn, member_arn = (f"arn:aws:iam::{a}:{name}" for a in (HOME, MEMBER))
    # Each account has its own policy, made there (the member's through its role).
    assert _attached(home_iam) == [home_arn]
    assert _attached(member_iam) == [member_arn]
    store = action_deps(runtime.current()).store
    record = store.get(ACTION)
    assert record is not None and record.state == "announced"  # GONE is tried again
    tick(clock, T0 + timedelta(minutes=32))
    tick(clock, T0 + timedelta(minutes=33))
    record = store.get(ACTION)
    assert record is not None and record.state == "failed"
    assert f"arn:aws:iam::{GONE}:{ROLE} (failed: " in record.detail
    assert "attached to 2 of 3" in record.detail
    results = {t.target_id: t.result for t in store.targets(ACTION)}
    assert results == dict(zip(principals, ["attached", "attached", "failed"], strict=True))

    # The API detaches the tracker's own account's at once; the tick the member's, and
    # deletes both policies.
    status, released = api("POST", f"/budgets/nlp-cap/actions/{ACTION}/release")
    assert (status, released["state"], released["detached"]) == (200, "released", False)
    assert _attached(home_iam) == [] and _attached(member_iam) == [member_arn]
    tick(clock, T0 + timedelta(minutes=41))
    assert _attached(member_iam) == []
    assert _policy_gone(home_iam, home_arn) and _policy_gone(member_iam, member_arn)
    assert store.attached("nlp-cap") == []


def test_an_scp_goes_on_the_scopes_member_accounts_never_the_management_account(
    factory: AccountClients, monkeypatch: pytest.MonkeyPatch, stack: ExitStack
) -> None:
    org = boto3.client("organizations", region_name="us-east-1")
    org_id = org.create_organization(FeatureSet="ALL")["Organization"]["Id"]
    members = sorted(
        org.create_account(Email=f"m{i}@example.com", AccountName=f"m{i}")["CreateAccountStatus"][
            "AccountId"
        ]
        for i in range(2)
    )
    accounts = {"organization_id": org_id, "team_accounts": {"nlp": [HOME, *members]}}
    actions = {"enabled": True, "deny_with": "scp"}
    clock = _start(monkeypatch, {"accounts": accounts, "budget_actions": actions}, stack)

    tick(clock, T0 + timedelta(minutes=31))
    (policy,) = [
        p
        for p in org.list_policies(Filter="SERVICE_CONTROL_POLICY")["Policies"]
        if p["Name"].startswith("costtracker-")
    ]
    assert policy["Name"] == f"costtracker-deny-launch-{ACTION}"
    content = json.loads(org.describe_policy(PolicyId=policy["Id"])["Policy"]["Content"])
    assert content["Statement"][0]["Condition"]["StringEquals"] == {"aws:RequestTag/team": "nlp"}
    targets = org.list_targets_for_policy(PolicyId=policy["Id"])["Targets"]
    assert sorted(t["TargetId"] for t in targets) == members  # not HOME, the management
    store = action_deps(runtime.current()).store
    record = store.get(ACTION)
    assert record is not None and record.state == "done"
    assert f"{HOME} (refused: {HOME} is the management account" in record.detail

    # Raising the budget lifts it: detached from every account, then deleted.
    assert api("PUT", "/budgets/nlp-cap", {**BUDGET, "amount_usd": "100"})[0] == 200
    tick(clock, T0 + timedelta(minutes=33))
    listed = org.list_policies(Filter="SERVICE_CONTROL_POLICY")["Policies"]
    assert [p for p in listed if p["Name"].startswith("costtracker-")] == []
    record = store.get(ACTION)
    assert record is not None and (record.state, record.released_by) == (
        "released",
        "budget raised",
    )
