"""Budgets that act: the crossing timers' queue (always: alerts at the crossing are for
every budget) and, only while ``ledger.budget_actions.enabled``, the IAM that lets the
stopper stop opted-in training jobs and lets the tracker manage its own deny policies.

Every statement is bounded: StopTrainingJob only on jobs carrying the auto-stop opt-in
tag (``aws:ResourceTag``); iam:CreatePolicy / DeletePolicy only on ``policy/costtracker/*``;
attach and detach only with a policy ARN on that path (``iam:PolicyARN``), so no other
policy can be attached to anyone. With ``deny_with`` ``"scp"`` instead: Organizations
CreatePolicy / AttachPolicy / DetachPolicy only of service control policies
(``organizations:PolicyType``), only on the organisation's SCPs and accounts, and an
explicit deny of AttachPolicy to the management account when it is configured.
"""

from __future__ import annotations

from aws_cdk import Duration, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from cdk.constructs.lambda_factory import LedgerFunction
from cdk.nag import acknowledge
from shared.adapters.launch_denial import POLICY_PATH
from shared.adapters.scp_denial import SCP
from shared.config.ledger import AccountsConfig

# A timer is consumed within seconds; one that fails five times goes to the dead letters.
MAX_RECEIVES = 5
ATTACH_ACTIONS = ("iam:AttachRolePolicy", "iam:AttachUserPolicy", "iam:AttachGroupPolicy")
DETACH_ACTIONS = ("iam:DetachRolePolicy", "iam:DetachUserPolicy", "iam:DetachGroupPolicy")


class CrossingTimerQueue(Construct):
    """SQS messages delayed to the second (DelaySeconds 0-900), consumed by the timer."""

    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        self.dead_letters = sqs.Queue(
            self,
            "DeadLetters",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=Duration.days(14),
        )
        self.queue = sqs.Queue(
            self,
            "Queue",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            # Six times the timer function's timeout (55 s), as Lambda's guide advises.
            visibility_timeout=Duration.seconds(330),
            retention_period=Duration.days(1),
            dead_letter_queue=sqs.DeadLetterQueue(
                max_receive_count=MAX_RECEIVES, queue=self.dead_letters
            ),
        )

    def connect(self, sender: LedgerFunction, consumer: LedgerFunction) -> None:
        self.queue.grant_send_messages(sender.role)
        consumer.function.add_event_source(
            sources.SqsEventSource(self.queue, batch_size=10, report_batch_item_failures=False)
        )


class BudgetActionPermissions:
    """The IAM of budget actions, added to a function's role (``cdk/grants.py`` asks)."""

    def __init__(
        self, stack: Stack, opt_in_tag_key: str, region: str | None, account: str | None
    ) -> None:
        self.stack = stack
        self.tag_key = opt_in_tag_key
        self.region = region
        self.account = account

    def _policy_arn(self) -> str:
        return f"arn:{self.stack.partition}:iam::{self.stack.account}:policy{POLICY_PATH}*"

    def grant_training_stops(self, role: iam.IRole) -> None:
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["sagemaker:StopTrainingJob"],
                resources=[
                    self.stack.format_arn(
                        service="sagemaker", resource="training-job", resource_name="*"
                    )
                ],
                conditions={"StringEquals": {f"aws:ResourceTag/{self.tag_key}": "true"}},
            )
        )
        acknowledge(
            role,
            "IAM5",
            "sagemaker:StopTrainingJob only on training jobs carrying the auto-stop opt-in "
            f"tag {self.tag_key}=true (IAM tag condition); job names are not known at synth.",
            finding=f"Resource::arn:<AWS::Partition>:sagemaker:{self.region}:"
            f"{self.account}:training-job/*",
        )

    def grant_deny_policies(
        self, role: iam.IRole, *, manage: bool, principals: tuple[str, ...]
    ) -> None:
        """``manage``: create its policies and attach / detach them; else detach only
        (the API's release). Attach and detach name the configured ``deny_principals``
        themselves, so the role can never attach a policy to any other principal."""
        arn = self._policy_arn()
        if manage:
            role.add_to_principal_policy(
                iam.PolicyStatement(
                    actions=["iam:CreatePolicy", "iam:GetPolicy", "iam:DeletePolicy"],
                    resources=[arn],
                )
            )
            acknowledge(
                role,
                "IAM5",
                f"iam:CreatePolicy / GetPolicy / DeletePolicy only under the tracker's path "
                f"policy{POLICY_PATH}*: each budget action's deny policy is named at run time.",
                finding=f"Resource::arn:<AWS::Partition>:iam::{self.account or '<AWS::AccountId>'}"
                f":policy{POLICY_PATH}*",
            )
        if not principals:
            return  # nothing to attach a deny to
        actions = [*ATTACH_ACTIONS, *DETACH_ACTIONS] if manage else list(DETACH_ACTIONS)
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=actions,
                resources=list(principals),
                conditions={"ArnLike": {"iam:PolicyARN": arn}},
            )
        )

    def grant_service_control_policies(self, role: iam.IRole, accounts: AccountsConfig) -> None:
        """deny_launch as an SCP: the tracker's own role, in the management account or an
        Organizations delegated administrator (whose delegation policy must allow these)."""
        partition, org = self.stack.partition, accounts.organization_id
        assert org, "deny_with scp needs accounts.organization_id (checked by the config)"
        management = accounts.management_account or "*"
        policies = (
            f"arn:{partition}:organizations::{management}:policy/{org}/service_control_policy/*"
        )
        member_accounts = f"arn:{partition}:organizations::{management}:account/{org}/*"
        only_scps = {"StringEquals": {"organizations:PolicyType": SCP}}
        statements = [
            iam.PolicyStatement(
                actions=["organizations:CreatePolicy", "organizations:ListPolicies"],
                resources=["*"],
                conditions=only_scps,
            ),
            iam.PolicyStatement(
                actions=["organizations:AttachPolicy", "organizations:DetachPolicy"],
                resources=[policies, member_accounts],
                conditions=only_scps,
            ),
            iam.PolicyStatement(actions=["organizations:DeletePolicy"], resources=[policies]),
            iam.PolicyStatement(actions=["organizations:DescribeOrganization"], resources=["*"]),
        ]
        if accounts.management_account:
            statements.append(
                iam.PolicyStatement(
                    effect=iam.Effect.DENY,
                    actions=["organizations:AttachPolicy"],
                    resources=[
                        f"arn:{partition}:organizations::{management}:account/{org}/"
                        f"{accounts.management_account}"
                    ],
                )
            )
        for statement in statements:
            role.add_to_principal_policy(statement)
        acknowledge(
            role,
            "IAM5",
            "organizations:CreatePolicy / ListPolicies only of service control policies "
            "(organizations:PolicyType); CreatePolicy and DescribeOrganization support no "
            "resource-level permissions.",
            finding="Resource::*",
        )
        for arn, what in ((policies, "the organisation's SCPs"), (member_accounts, "its accounts")):
            acknowledge(
                role,
                "IAM5",
                f"Attach / detach / delete of service control policies only "
                f"(organizations:PolicyType), on {what}: each budget action's SCP and the "
                "scope's accounts are known at run time.",
                finding=f"Resource::arn:<AWS::Partition>:{arn.split(':', 2)[2]}",
            )
