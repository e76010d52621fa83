"""Budget actions in the template: the crossing timers' queue always (alerts at the
crossing), and the stop and deny permissions only while ledger.budget_actions.enabled,
each bounded (the opt-in tag, the tracker's own policy path)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk.assertions import Template
from conftest import FEATURED_CONTEXT, Synthesized, cdk_json_context
from test_infra_stack import _as_list, function_id, role_statements

from cdk.app import build_app

OPT_IN = "costtracker:auto-stop"
ACTING = ("budget_tick", "budget_timer", "job_cost_api")


def iam_statements(synthesized: Synthesized, function: str) -> list[dict[str, Any]]:
    return [
        s
        for s in role_statements(synthesized, function)
        if any(a.startswith(("iam:", "sagemaker:Stop", "ec2:Stop")) for a in _as_list(s["Action"]))
    ]


def test_without_actions_enabled_no_function_may_stop_or_touch_iam(
    synthesized: Synthesized,
) -> None:
    for function in ACTING:
        assert iam_statements(synthesized, function) == [], function


def test_stops_need_the_opt_in_tag(featured: Synthesized) -> None:
    for function in ("budget_tick", "budget_timer"):
        statements = iam_statements(featured, function)
        stops = [s for s in statements if "Stop" in json.dumps(s["Action"])]
        assert {a for s in stops for a in _as_list(s["Action"])} == {
            "ec2:StopInstances",
            "sagemaker:StopTrainingJob",
        }
        for statement in stops:
            assert statement["Condition"] == {"StringEquals": {f"aws:ResourceTag/{OPT_IN}": "true"}}


def _policy_path(value: Any) -> str:
    return json.dumps(value).split(":policy", 1)[1]


def test_deny_policies_only_on_the_trackers_own_path(featured: Synthesized) -> None:
    statements = iam_statements(featured, "budget_tick")
    create = [s for s in statements if "iam:CreatePolicy" in _as_list(s["Action"])]
    assert len(create) == 1 and "Condition" not in create[0]
    assert _policy_path(create[0]["Resource"]).startswith('/costtracker/*"')
    for statement in statements:
        actions = _as_list(statement["Action"])
        if any(a.startswith(("iam:Attach", "iam:Detach")) for a in actions):
            path = statement["Condition"]["ArnLike"]["iam:PolicyARN"]
            assert _policy_path(path).startswith('/costtracker/*"')
            # Only to the configured principals: never a wildcard a policy could reach.
            assert _as_list(statement["Resource"]) == ["arn:aws:iam::123456789012:role/ml-nlp"]
    # The API only detaches (a release): it never creates or attaches.
    api = {a for s in iam_statements(featured, "job_cost_api") for a in _as_list(s["Action"])}
    assert api == {"iam:DetachRolePolicy", "iam:DetachUserPolicy", "iam:DetachGroupPolicy"}


def test_the_timer_queue_feeds_the_timer_and_takes_the_ticks_messages(
    synthesized: Synthesized,
) -> None:
    (queue_id,) = [
        q
        for q in synthesized.resources("AWS::SQS::Queue")
        if synthesized.path_of(q).endswith("/CrossingTimers/Queue/Resource")
    ]
    queue = synthesized.json["Resources"][queue_id]["Properties"]
    assert queue["SqsManagedSseEnabled"] is True and "RedrivePolicy" in queue
    timer = function_id(synthesized, "budget_timer")
    (mapping,) = [
        m
        for m in synthesized.resources("AWS::Lambda::EventSourceMapping").values()
        if m["Properties"]["FunctionName"] == {"Ref": timer}
    ]
    assert mapping["Properties"]["EventSourceArn"] == {"Fn::GetAtt": [queue_id, "Arn"]}
    tick = synthesized.json["Resources"][function_id(synthesized, "budget_tick")]
    assert tick["Properties"]["Environment"]["Variables"]["CROSSING_TIMER_QUEUE_URL"] == {
        "Ref": queue_id
    }


SCP_CONTEXT = {
    **FEATURED_CONTEXT,
    "ledger.budget_actions.deny_with": "scp",
    "ledger.accounts.management_account": "111122223333",
}
ORG = "o-abcdef1234"


@pytest.fixture(scope="module")
def scp_denying(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    outdir = tmp_path_factory.mktemp("scp.out")
    _, stack, settings = build_app(cdk_json_context(**SCP_CONTEXT), outdir=str(outdir), nag=False)
    template = Template.from_stack(stack)
    return Synthesized(template, dict(template.to_json()), settings)


def organizations_statements(synthesized: Synthesized, function: str) -> list[dict[str, Any]]:
    return [
        s
        for s in role_statements(synthesized, function)
        if any(a.startswith("organizations:") for a in _as_list(s["Action"]))
        and "organizations:ListAccounts" not in _as_list(s["Action"])
    ]


def test_scps_only_with_deny_with_scp_bounded_to_service_control_policies(
    featured: Synthesized, scp_denying: Synthesized
) -> None:
    for function in ACTING:
        assert organizations_statements(featured, function) == [], function
    # Denying with SCPs, no function manages IAM policies, and the API touches nothing.
    for function in ACTING:
        assert not [s for s in iam_statements(scp_denying, function) if "iam:" in json.dumps(s)]
    assert organizations_statements(scp_denying, "job_cost_api") == []
    for function in ("budget_tick", "budget_timer"):
        statements = organizations_statements(scp_denying, function)
        allowed = {
            a: s
            for s in statements
            if s["Effect"] == "Allow"
            for a in _as_list(s["Action"])
            if a.startswith("organizations:")
        }
        assert set(allowed) == {
            "organizations:CreatePolicy",
            "organizations:ListPolicies",
            "organizations:AttachPolicy",
            "organizations:DetachPolicy",
            "organizations:DeletePolicy",
            "organizations:DescribeOrganization",
        }
        scp_only = {"StringEquals": {"organizations:PolicyType": "SERVICE_CONTROL_POLICY"}}
        for action in ("CreatePolicy", "ListPolicies", "AttachPolicy", "DetachPolicy"):
            assert allowed[f"organizations:{action}"]["Condition"] == scp_only, action
        for action in ("AttachPolicy", "DetachPolicy", "DeletePolicy"):
            for resource in _as_list(allowed[f"organizations:{action}"]["Resource"]):
                text = json.dumps(resource)
                assert f"/{ORG}/service_control_policy/*" in text or f"account/{ORG}/*" in text
        # Never the management account, whatever the run time decides.
        (deny,) = [s for s in statements if s["Effect"] == "Deny"]
        assert _as_list(deny["Action"]) == ["organizations:AttachPolicy"]
        assert json.dumps(deny["Resource"]).endswith(f'account/{ORG}/111122223333"]]}}')
