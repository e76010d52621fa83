"""The once-per-account part of a member account (IAM is global): the role the tracker
assumes there (``ledger.accounts.member_role_name``) and the role its rules forward
events with (``FORWARD_ROLE_NAME``).

The member role trusts exactly one principal, the tracker role
(``ledger.accounts.tracker_role_name`` in the tracker's account): IAM checks that the
role exists when this one is made, so the tracker stack is deployed first. Its
permissions, least privilege (``MEMBER_PERMISSIONS`` is the written-down list):

- Describe calls (instances, volumes, capacity reservations, FSx file systems) and
  ``cloudwatch:GetMetricData``: AWS offers no resource-level permissions for them
  (Resource ``*``);
- SageMaker DescribeTrainingJob / ListTags on the account's training jobs;
- CloudWatch PutMetricAlarm / DeleteAlarms / DescribeAlarms / TagResource on the
  tracker's own alarms only (``<alarm_prefix>*``);
- ``ec2:StopInstances`` and ``sagemaker:StopTrainingJob`` only where the auto-stop
  opt-in tag is ``true`` (an IAM tag condition);
- only while budget actions are on and deny with IAM (``ledger.budget_actions.enabled``,
  ``deny_with`` ``"iam"``): create, read and delete policies only on the tracker's path
  (``policy/costtracker/*``), and attach and detach only policies on that path
  (``iam:PolicyARN``) and only to the configured ``deny_principals`` (by their ARNs,
  never a wildcard), for deny_launch in this account.
"""

from __future__ import annotations

from aws_cdk import Duration, Stack
from aws_cdk import aws_iam as iam
from constructs import Construct

from cdk.nag import acknowledge
from shared.config.ledger import LedgerConfig

FORWARD_ROLE_NAME = "costtracker-member-forward"
POLICY_PATH = "/costtracker/"
DESCRIBE = (
    "ec2:DescribeInstances",
    "ec2:DescribeVolumes",
    "ec2:DescribeCapacityReservations",
    "fsx:DescribeFileSystems",
    "cloudwatch:GetMetricData",
)
TRAINING_READS = ("sagemaker:DescribeTrainingJob", "sagemaker:ListTags")
ALARM_ACTIONS = (
    "cloudwatch:PutMetricAlarm",
    "cloudwatch:DeleteAlarms",
    "cloudwatch:DescribeAlarms",
    "cloudwatch:TagResource",
)
POLICY_MANAGEMENT = ("iam:CreatePolicy", "iam:GetPolicy", "iam:DeletePolicy")
POLICY_ACTIONS = (
    "iam:AttachRolePolicy",
    "iam:DetachRolePolicy",
    "iam:AttachUserPolicy",
    "iam:DetachUserPolicy",
    "iam:AttachGroupPolicy",
    "iam:DetachGroupPolicy",
)
# action -> on what, under which condition (docs/accounts-admin.md prints this list).
MEMBER_PERMISSIONS: tuple[tuple[str, str, str], ...] = (
    *((a, "*", "none: no resource-level permissions exist") for a in DESCRIBE),
    *((a, "training-job/*", "none") for a in TRAINING_READS),
    *((a, "alarm:<alarm_prefix>*", "none") for a in ALARM_ACTIONS),
    ("ec2:StopInstances", "instance/*", "aws:ResourceTag/<auto_stop.tag_key> = true"),
    ("sagemaker:StopTrainingJob", "training-job/*", "aws:ResourceTag/<auto_stop.tag_key> = true"),
)
# Only while budget actions are on and deny with IAM (deny_launch in this account).
DENY_PERMISSIONS: tuple[tuple[str, str, str], ...] = (
    *((a, "policy/costtracker/*", "none") for a in POLICY_MANAGEMENT),
    *(
        (a, "each ARN of deny_principals", "iam:PolicyARN like policy/costtracker/*")
        for a in POLICY_ACTIONS
    ),
)


class MemberRoles(Construct):
    """The member role and the forwarding role of one member account."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        tracker_account: str,
        tracker_region: str,
        ledger: LedgerConfig,
    ) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        partition, account = stack.partition, stack.account
        accounts = ledger.accounts
        tracker_role = f"arn:{partition}:iam::{tracker_account}:role/{accounts.tracker_role_name}"
        self.forward_role = iam.Role(
            self,
            "ForwardRole",
            role_name=FORWARD_ROLE_NAME,
            assumed_by=iam.ServicePrincipal("events.amazonaws.com"),
            description="costtracker: forward events to the tracker account's bus",
        )
        self.forward_role.add_to_policy(
            iam.PolicyStatement(
                actions=["events:PutEvents"],
                resources=[
                    f"arn:{partition}:events:{tracker_region}:{tracker_account}:event-bus/default"
                ],
            )
        )
        self.role = iam.Role(
            self,
            "ReadRole",
            role_name=accounts.member_role_name,
            description="costtracker: the tracker's Describe, metric, alarm and stop calls",
            max_session_duration=Duration.hours(1),
            assumed_by=iam.ArnPrincipal(tracker_role),
        )
        tag = ledger.auto_stop.tag_key
        opted_in = {"StringEquals": {f"aws:ResourceTag/{tag}": "true"}}
        alarms = f"arn:{partition}:cloudwatch:*:{account}:alarm:{ledger.utilization.alarm_prefix}*"
        jobs = f"arn:{partition}:sagemaker:*:{account}:training-job/*"
        instances = f"arn:{partition}:ec2:*:{account}:instance/*"
        # The configured principals themselves (each ARN names its account: in any other
        # account it matches nothing), never a wildcard.
        principals = list(ledger.budget_actions.deny_principals)
        own_policies = f"arn:{partition}:iam::{account}:policy{POLICY_PATH}*"
        statements = [
            iam.PolicyStatement(actions=list(DESCRIBE), resources=["*"]),
            iam.PolicyStatement(actions=list(TRAINING_READS), resources=[jobs]),
            iam.PolicyStatement(actions=list(ALARM_ACTIONS), resources=[alarms]),
            iam.PolicyStatement(
                actions=["ec2:StopInstances"], resources=[instances], conditions=opted_in
            ),
            iam.PolicyStatement(
                actions=["sagemaker:StopTrainingJob"], resources=[jobs], conditions=opted_in
            ),
        ]
        actions = ledger.budget_actions
        denies = actions.enabled and actions.deny_with == "iam"
        if denies:
            statements.append(
                iam.PolicyStatement(actions=list(POLICY_MANAGEMENT), resources=[own_policies])
            )
        if denies and principals:
            statements.append(
                iam.PolicyStatement(
                    actions=list(POLICY_ACTIONS),
                    resources=principals,
                    conditions={"ArnLike": {"iam:PolicyARN": own_policies}},
                )
            )
        for statement in statements:
            self.role.add_to_policy(statement)
        self._acknowledge(stack, alarms, jobs, instances, [own_policies] if denies else [])

    def _acknowledge(
        self, stack: Stack, alarms: str, jobs: str, instances: str, principals: list[str]
    ) -> None:
        reasons = {
            "Resource::*": "EC2/FSx Describe* and cloudwatch:GetMetricData support no "
            "resource-level permissions; AWS requires Resource '*'.",
            _finding(stack, alarms): "Only the tracker's own alarms, by their name prefix.",
            _finding(stack, jobs): "SageMaker training jobs of this account; "
            "StopTrainingJob only where the auto-stop opt-in tag is true.",
            _finding(stack, instances): "ec2:StopInstances only where the auto-stop opt-in "
            "tag is true.",
            **{
                _finding(stack, p): "Create/delete only policies on the tracker's path, "
                "attached/detached only to the configured deny principals (iam:PolicyARN "
                "condition), for budget actions."
                for p in principals
            },
        }
        for finding, reason in reasons.items():
            acknowledge(self.role, "IAM5", reason, finding=finding)


def _finding(stack: Stack, arn: str) -> str:
    """An ARN as cdk-nag names it in an IAM5 finding (pseudo parameters in angle
    brackets)."""
    resolved = stack.resolve(arn)
    if isinstance(resolved, str):
        return f"Resource::{resolved}"
    parts = resolved["Fn::Join"][1]
    return "Resource::" + "".join(
        f"<{part['Ref']}>" if isinstance(part, dict) else str(part) for part in parts
    )
