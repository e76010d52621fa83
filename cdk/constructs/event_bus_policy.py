"""The tracker's default event bus accepts events from the organisation's accounts
(``ledger.accounts.organization_id``): the member-account stack's rules forward to it."""

from __future__ import annotations

from aws_cdk import Stack
from aws_cdk import aws_events as events
from constructs import Construct


class OrganizationBusPolicy(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, organization_id: str) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        self.policy = events.CfnEventBusPolicy(
            self,
            "Policy",
            statement_id="costtracker-organization-put-events",
            event_bus_name="default",
            statement={
                "Sid": "costtracker-organization-put-events",
                "Effect": "Allow",
                "Principal": "*",
                "Action": "events:PutEvents",
                "Resource": f"arn:{stack.partition}:events:{stack.region}:"
                f"{stack.account}:event-bus/default",
                "Condition": {"StringEquals": {"aws:PrincipalOrgID": organization_id}},
            },
        )


class AllowedAccountsBusPolicy(Construct):
    """Where Organizations is not used: the bus accepts events from the allow-listed
    accounts (``ledger.accounts.allowed_accounts``), each named exactly."""

    def __init__(self, scope: Construct, construct_id: str, *, accounts: tuple[str, ...]) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        self.policy = events.CfnEventBusPolicy(
            self,
            "Policy",
            statement_id="costtracker-allowed-accounts-put-events",
            event_bus_name="default",
            statement={
                "Sid": "costtracker-allowed-accounts-put-events",
                "Effect": "Allow",
                "Principal": {"AWS": [f"arn:{stack.partition}:iam::{a}:root" for a in accounts]},
                "Action": "events:PutEvents",
                "Resource": f"arn:{stack.partition}:events:{stack.region}:"
                f"{stack.account}:event-bus/default",
            },
        )
