"""The member-account stack (``-c stacks=member``): deployed in each account where
teams train, it forwards the events the tracker prices from to the tracker's default
event bus (``account`` / ``region`` of the settings), and creates the read-only role
the tracker assumes there for its Describe calls.

Environment-agnostic unless ``member.account`` / ``member.region`` are set, so the
same template can be rolled out as a CloudFormation StackSet across an organisation.
The tracker's bus accepts the events only with ``ledger.accounts.organization_id`` set
(``aws:PrincipalOrgID``; see ``cdk/constructs/event_bus_policy.py``).
"""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, Duration, Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from constructs import Construct

from cdk.constructs.checkpoint_buckets import CheckpointBuckets
from cdk.constructs.ec2_events import event_pattern
from cdk.nag import acknowledge
from cdk.stack_settings import StackSettings
from shared.app.functions import EVENT_RULES, checkpoint_rule

# The Describe calls the tracker makes in a member account. EC2 Describe* actions
# support no resource-level permissions (Resource "*").
MEMBER_EC2_READS = (
    "ec2:DescribeInstances",
    "ec2:DescribeVolumes",
    "ec2:DescribeCapacityReservations",
    "ec2:DescribeSpotPriceHistory",
)
SAGEMAKER_READS = ("sagemaker:DescribeTrainingJob", "sagemaker:ListTags")
# The daily FSx refresh lists the account's file systems (Resource "*").
MEMBER_FSX_READS = ("fsx:DescribeFileSystems",)


def member_patterns(settings: StackSettings) -> dict[str, dict[str, Any]]:
    """Rule name -> EventBridge pattern of what a member account forwards."""
    patterns: dict[str, dict[str, Any]] = {
        "Ec2StateChange": EVENT_RULES["instance_state"],
        "SpotInterruption": EVENT_RULES["spot_interruption"],
        "AlarmStateChange": {
            **EVENT_RULES["alarm_state"],
            "detail": {
                "alarmName": [{"prefix": settings.ledger.utilization.alarm_prefix}],
            },
        },
        "SageMakerTrainingJob": {
            "source": ["aws.sagemaker"],
            "detail-type": ["SageMaker Training Job State Change"],
        },
        # FSx for Lustre file system calls, as CloudTrail records them (a trail must be
        # logging in the account and region for EventBridge to see them).
        "FsxApiCalls": EVENT_RULES["fsx_event"],
    }
    if settings.member.checkpoint_buckets:
        patterns["Checkpoint"] = checkpoint_rule(settings.member.checkpoint_buckets)
    return patterns


class CostTrackerMemberStack(Stack):
    def __init__(
        self, scope: Construct, construct_id: str, *, settings: StackSettings, **kwargs: Any
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        tracker_bus = events.EventBus.from_event_bus_arn(
            self,
            "TrackerBus",
            f"arn:{self.partition}:events:{settings.region}:{settings.account}:event-bus/default",
        )
        # One role for every rule's target: PutEvents on the tracker's bus only.
        forward_role = iam.Role(
            self,
            "ForwardRole",
            assumed_by=iam.ServicePrincipal("events.amazonaws.com"),
            description="costtracker: forward events to the tracker account's bus",
        )
        self.rules: dict[str, events.Rule] = {}
        for name, pattern in member_patterns(settings).items():
            rule = events.Rule(
                self,
                name,
                description=f"costtracker member: {', '.join(pattern['detail-type'])} -> tracker",
                event_pattern=event_pattern(pattern),
            )
            rule.add_target(targets.EventBus(tracker_bus, role=forward_role))
            self.rules[name] = rule
        CheckpointBuckets(self, "CheckpointBuckets", buckets=settings.member.checkpoint_buckets)

        # The read-only role the tracker's functions assume (their roles only).
        self.read_role = iam.Role(
            self,
            "ReadRole",
            role_name=settings.ledger.accounts.member_role_name,
            description="costtracker: read-only Describe calls by the tracker account",
            max_session_duration=Duration.hours(1),
            assumed_by=iam.AccountPrincipal(settings.account).with_conditions(
                {
                    "ArnLike": {
                        "aws:PrincipalArn": f"arn:{self.partition}:iam::{settings.account}:"
                        f"role/{settings.stack_name}-*"
                    }
                }
            ),
        )
        self.read_role.add_to_policy(
            iam.PolicyStatement(actions=list(MEMBER_EC2_READS + MEMBER_FSX_READS), resources=["*"])
        )
        self.read_role.add_to_policy(
            iam.PolicyStatement(
                actions=list(SAGEMAKER_READS),
                resources=[
                    self.format_arn(service="sagemaker", resource="training-job", resource_name="*")
                ],
            )
        )
        acknowledge(
            self.read_role,
            "IAM5",
            "EC2 Describe* actions (instances, volumes, capacity reservations, spot price "
            "history) do not support resource-level permissions; AWS requires Resource '*'; "
            "fsx:DescribeFileSystems lists every file system of the account (the daily "
            "refresh finds those no event announced).",
            finding="Resource::*",
        )
        acknowledge(
            self.read_role,
            "IAM5",
            "sagemaker:DescribeTrainingJob and ListTags on this account's training jobs (any "
            "name): the tracker reads the job of each training-job state change it receives.",
            finding=f"Resource::arn:<AWS::Partition>:sagemaker:{self._nag_region()}:"
            f"{self._nag_account()}:training-job/*",
        )
        CfnOutput(
            self,
            "ReadRoleArn",
            value=self.read_role.role_arn,
            description="The role the tracker assumes in this account (read-only)",
        )

    def _nag_region(self) -> str:
        return "<AWS::Region>" if not self.region[:1].isalpha() else self.region

    def _nag_account(self) -> str:
        return "<AWS::AccountId>" if not self.account.isdigit() else self.account
