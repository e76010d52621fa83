"""The member-account stack: what it forwards to the tracker's bus, the read-only role
the tracker assumes there, and cdk-nag on it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk.assertions import Template
from conftest import cdk_json_context

from cdk.app import build_app
from shared.app.functions import EVENT_RULES

MEMBER_CONTEXT = {
    "stacks": "tracker,member",
    "member.account": "210987654321",
    "member.region": "eu-west-1",
    "member.checkpoint_buckets": "ckpt-a,ckpt-b",
    "ledger.accounts.organization_id": "o-abcdef1234",
}


# Budget actions on, denying with IAM: the member role may manage the tracker's own deny
# policies in its account.
MEMBER_TEAM_ROLE = "arn:aws:iam::210987654321:role/team-nlp"
DENYING_CONTEXT = {
    **MEMBER_CONTEXT,
    "ledger.budget_actions.enabled": "true",
    "ledger.budget_actions.deny_principals": f'["{MEMBER_TEAM_ROLE}"]',
}


def _member_template(tmp: pytest.TempPathFactory, context: dict[str, str]) -> dict[str, Any]:
    outdir = tmp.mktemp("member.out")
    app, tracker, _ = build_app(cdk_json_context(**context), outdir=str(outdir), nag=False)
    assert tracker.stack_name == "CostTracker"
    stack = app.node.find_child("CostTrackerMember")
    assert isinstance(stack, Stack)
    assert (stack.account, stack.region) == ("210987654321", "eu-west-1")
    return dict(Template.from_stack(stack).to_json())


@pytest.fixture(scope="module")
def member(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _member_template(tmp_path_factory, MEMBER_CONTEXT)


@pytest.fixture(scope="module")
def denying(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _member_template(tmp_path_factory, DENYING_CONTEXT)


def _of_type(template: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [r for r in template["Resources"].values() if r["Type"] == kind]


def _rule_with(template: dict[str, Any], detail_type: str) -> dict[str, Any]:
    (rule,) = [
        r["Properties"] for r in _of_type(template, "AWS::Events::Rule")
        if detail_type in r["Properties"]["EventPattern"]["detail-type"]
    ]  # fmt: skip
    return rule


@pytest.mark.parametrize(
    ("detail_type", "pattern"),
    [
        ("EC2 Instance State-change Notification", EVENT_RULES["instance_state"]),
        ("EC2 Spot Instance Interruption Warning", EVENT_RULES["spot_interruption"]),
        ("EC2 Instance Rebalance Recommendation", EVENT_RULES["spot_interruption"]),
        ("CloudWatch Alarm State Change",
         {**EVENT_RULES["alarm_state"], "detail": {"alarmName": [{"prefix": "costtracker-"}]}}),
        ("SageMaker Training Job State Change",
         {"source": ["aws.sagemaker"], "detail-type": ["SageMaker Training Job State Change"]}),
        ("Object Created", {"source": ["aws.s3"], "detail-type": ["Object Created",
         "Object Deleted"], "detail": {"bucket": {"name": ["ckpt-a", "ckpt-b"]}}}),
        # FSx for Lustre file system calls recorded by CloudTrail (docs/cost-rules.md "Many
        # accounts").
        ("AWS API Call via CloudTrail", {"source": ["aws.fsx"],
         "detail-type": ["AWS API Call via CloudTrail"],
         "detail": {"eventSource": ["fsx.amazonaws.com"],
                    "eventName": ["CreateFileSystem", "UpdateFileSystem", "DeleteFileSystem"]}}),
    ],
)  # fmt: skip
def test_member_rules_forward_to_the_tracker_bus(
    member: dict[str, Any], detail_type: str, pattern: dict[str, Any]
) -> None:
    rule = _rule_with(member, detail_type)
    assert rule["EventPattern"] == pattern
    assert rule.get("State", "ENABLED") == "ENABLED"
    assert json.dumps(rule["Targets"][0]["Arn"]).count("event-bus/default") == 1
    assert "123456789012" in json.dumps(rule["Targets"][0]["Arn"])
    assert "us-east-1" in json.dumps(rule["Targets"][0]["Arn"])


def test_forwarding_role_may_only_put_events_on_the_tracker_bus(member: dict[str, Any]) -> None:
    statements = [
        s for p in _of_type(member, "AWS::IAM::Policy")
        for s in p["Properties"]["PolicyDocument"]["Statement"]
        if "events:PutEvents" in json.dumps(s)
    ]  # fmt: skip
    assert statements
    for statement in statements:
        assert statement["Action"] == "events:PutEvents"
        assert "event-bus/default" in json.dumps(statement["Resource"])
        assert "123456789012" in json.dumps(statement["Resource"])


def _member_role_statements(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    (policy,) = [
        p["Properties"] for p in _of_type(template, "AWS::IAM::Policy")
        if "sagemaker:DescribeTrainingJob" in json.dumps(p)
    ]  # fmt: skip
    return {
        a: s for s in policy["PolicyDocument"]["Statement"]
        for a in (s["Action"] if isinstance(s["Action"], list) else [s["Action"]])
    }  # fmt: skip


def test_member_role_trusts_exactly_the_tracker_role(member: dict[str, Any]) -> None:
    (role,) = [
        r["Properties"] for r in _of_type(member, "AWS::IAM::Role")
        if r["Properties"].get("RoleName") == "costtracker-member-read"
    ]  # fmt: skip
    (trust,) = role["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {
        "AWS": {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"},
                                  ":iam::123456789012:role/costtracker-tracker"]]}
    }  # fmt: skip
    assert "Condition" not in trust
    by_action = _member_role_statements(member)
    # Without budget actions, no IAM action at all.
    assert set(by_action) == {
        "ec2:DescribeInstances", "ec2:DescribeVolumes", "ec2:DescribeCapacityReservations",
        "fsx:DescribeFileSystems", "cloudwatch:GetMetricData",
        "sagemaker:DescribeTrainingJob", "sagemaker:ListTags",
        "cloudwatch:PutMetricAlarm", "cloudwatch:DeleteAlarms", "cloudwatch:DescribeAlarms",
        "cloudwatch:TagResource",
        "ec2:StopInstances", "sagemaker:StopTrainingJob",
    }  # fmt: skip
    for action, statement in by_action.items():
        resource = json.dumps(statement["Resource"])
        if action.startswith("cloudwatch:") and action != "cloudwatch:GetMetricData":
            assert ":alarm:costtracker-*" in resource, action
        if action in ("ec2:StopInstances", "sagemaker:StopTrainingJob"):
            assert statement["Condition"] == {
                "StringEquals": {"aws:ResourceTag/costtracker:auto-stop": "true"}
            }, action
        if statement["Resource"] == "*":
            assert action.startswith(("ec2:Describe", "fsx:Describe", "cloudwatch:GetMetric"))


def test_with_budget_actions_the_member_role_manages_only_its_own_deny_policies(
    member: dict[str, Any], denying: dict[str, Any]
) -> None:
    plain, by_action = _member_role_statements(member), _member_role_statements(denying)
    added = {a: s for a, s in by_action.items() if a not in plain}
    assert set(added) == {
        "iam:CreatePolicy", "iam:GetPolicy", "iam:DeletePolicy",
        "iam:AttachRolePolicy", "iam:DetachRolePolicy", "iam:AttachUserPolicy",
        "iam:DetachUserPolicy", "iam:AttachGroupPolicy", "iam:DetachGroupPolicy",
    }  # fmt: skip
    for action, statement in added.items():
        if action in ("iam:CreatePolicy", "iam:GetPolicy", "iam:DeletePolicy"):
            assert "Condition" not in statement
            (resource,) = _as_list(statement["Resource"])
            assert json.dumps(resource).endswith(':210987654321:policy/costtracker/*"]]}')
        else:
            condition = json.dumps(statement["Condition"]["ArnLike"]["iam:PolicyARN"])
            assert condition.endswith(':210987654321:policy/costtracker/*"]]}'), action
            # Only the configured principals, by their ARNs: never role/* or user/*.
            assert _as_list(statement["Resource"]) == [MEMBER_TEAM_ROLE], action


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def test_checkpoint_buckets_of_the_member_send_to_eventbridge(member: dict[str, Any]) -> None:
    notifications = _of_type(member, "Custom::S3BucketNotifications")
    assert {n["Properties"]["BucketName"] for n in notifications} == {"ckpt-a", "ckpt-b"}


@pytest.mark.parametrize(
    "context",
    [{"stacks": "member"}, MEMBER_CONTEXT, DENYING_CONTEXT],
    ids=["stack-set-ready", "with-buckets", "denying"],
)
def test_member_stack_is_nag_clean(tmp_path: Path, context: dict[str, str]) -> None:
    context = {**context, "stacks": "member"}
    app, stack, _ = build_app(cdk_json_context(**context), outdir=str(tmp_path), nag=True)
    assert stack.stack_name == "CostTrackerMember"
    try:
        app.synth()
    except RuntimeError as error:
        if "Validation failed" not in str(error):
            raise
    report = json.loads((tmp_path / "validation-report.json").read_text())
    (plugin,) = [p for p in report["pluginReports"] if p["pluginName"] == "AwsSolutions"]
    assert plugin["violations"] == [] and plugin["conclusion"] == "success"
