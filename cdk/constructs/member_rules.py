"""The per-region part of a member account: the EventBridge rules that forward what the
tracker prices from to the tracker's default bus, with the account's forwarding role
(``member_roles.FORWARD_ROLE_NAME``, made once per account by the roles part)."""

from __future__ import annotations

from typing import Any

from aws_cdk import Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from constructs import Construct

from cdk.constructs.ec2_events import event_pattern
from cdk.constructs.member_roles import FORWARD_ROLE_NAME
from shared.app.functions import EVENT_RULES, checkpoint_rule
from shared.config.ledger import LedgerConfig


def member_patterns(
    ledger: LedgerConfig, checkpoint_buckets: tuple[str, ...]
) -> dict[str, dict[str, Any]]:
    """Rule name -> EventBridge pattern of what a member account forwards."""
    patterns: dict[str, dict[str, Any]] = {
        "Ec2StateChange": EVENT_RULES["instance_state"],
        "SpotInterruption": EVENT_RULES["spot_interruption"],
        "AlarmStateChange": {
            **EVENT_RULES["alarm_state"],
            "detail": {"alarmName": [{"prefix": ledger.utilization.alarm_prefix}]},
        },
        "SageMakerTrainingJob": EVENT_RULES["training_job_state"],
        # FSx for Lustre file system calls, as CloudTrail records them (a trail must be
        # logging in the account and region for EventBridge to see them).
        "FsxApiCalls": EVENT_RULES["fsx_event"],
    }
    if checkpoint_buckets:
        patterns["Checkpoint"] = checkpoint_rule(checkpoint_buckets)
    return patterns


class MemberRules(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        tracker_account: str,
        tracker_region: str,
        ledger: LedgerConfig,
        checkpoint_buckets: tuple[str, ...],
        forward_role: iam.IRole | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        bus = events.EventBus.from_event_bus_arn(
            self,
            "TrackerBus",
            f"arn:{stack.partition}:events:{tracker_region}:{tracker_account}:event-bus/default",
        )
        role = forward_role or iam.Role.from_role_name(
            self, "ForwardRole", FORWARD_ROLE_NAME, mutable=False
        )
        self.rules: dict[str, events.Rule] = {}
        for name, pattern in member_patterns(ledger, checkpoint_buckets).items():
            rule = events.Rule(
                self,
                name,
                description=f"costtracker member: {', '.join(pattern['detail-type'])} -> tracker",
                event_pattern=event_pattern(pattern),
            )
            rule.add_target(targets.EventBus(bus, role=role))
            self.rules[name] = rule
