"""The tracker role: one role of a fixed name (``ledger.accounts.tracker_role_name``),
the only principal a member role trusts (``cdk/constructs/member_roles.py``). The
functions that act in member accounts assume it (trusted by their role ARNs exactly);
it may assume the member role in the organisation's accounts (``aws:ResourceOrgID``)
or in the allow-listed ones, and the management account's list role when one is
configured. Deployed with the tracker stack, before any member stack."""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import Duration, Stack
from aws_cdk import aws_iam as iam
from constructs import Construct

from cdk.nag import acknowledge
from shared.config.ledger import AccountsConfig


def tracker_role_arn(stack: Stack, accounts: AccountsConfig) -> str:
    return f"arn:{stack.partition}:iam::{stack.account}:role/{accounts.tracker_role_name}"


class TrackerRole(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        accounts: AccountsConfig,
        assumed_by: Sequence[iam.IRole],
    ) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        partition = stack.partition
        self.role = iam.Role(
            self,
            "Role",
            role_name=accounts.tracker_role_name,
            description="costtracker: the one principal member accounts trust",
            max_session_duration=Duration.hours(1),
            assumed_by=iam.CompositePrincipal(*(iam.ArnPrincipal(r.role_arn) for r in assumed_by)),
        )
        member = f"arn:{partition}:iam::*:role/{accounts.member_role_name}"
        if accounts.organization_id:
            self.role.add_to_policy(
                iam.PolicyStatement(
                    actions=["sts:AssumeRole"],
                    resources=[member],
                    conditions={"StringEquals": {"aws:ResourceOrgID": accounts.organization_id}},
                )
            )
            acknowledge(
                self.role,
                "IAM5",
                f"sts:AssumeRole of the member role {accounts.member_role_name} in any account "
                "of the organisation (aws:ResourceOrgID): accounts join after synth.",
                finding=f"Resource::arn:<AWS::Partition>:iam::*:role/{accounts.member_role_name}",
            )
        if accounts.allowed_accounts:
            self.role.add_to_policy(
                iam.PolicyStatement(
                    actions=["sts:AssumeRole"],
                    resources=[
                        f"arn:{partition}:iam::{a}:role/{accounts.member_role_name}"
                        for a in accounts.allowed_accounts
                    ],
                )
            )
        if accounts.organizations_role_name and accounts.management_account:
            self.role.add_to_policy(
                iam.PolicyStatement(
                    actions=["sts:AssumeRole"],
                    resources=[
                        f"arn:{partition}:iam::{accounts.management_account}:role/"
                        f"{accounts.organizations_role_name}"
                    ],
                )
            )
