"""A function's grants (``shared.app.function_grants.Grants``, data) as IAM statements on its
role, least privilege; each scoped grant acknowledges its cdk-nag finding."""

from __future__ import annotations

from aws_cdk import ArnFormat, Stack
from aws_cdk import aws_iam as iam

from cdk.constructs.alert_topics import AlertTopics
from cdk.constructs.budget_actions import BudgetActionPermissions
from cdk.constructs.lambda_factory import LedgerFunction
from cdk.constructs.ledger_table import LedgerTable
from cdk.constructs.reports_bucket import ReportsBucket
from cdk.constructs.sweep_fanout import SweepFanOut
from cdk.constructs.tracker_role import tracker_role_arn
from cdk.nag import acknowledge
from cdk.stack_settings import StackSettings
from shared.app.function_grants import Grants, Topic
from shared.config.ledger import LedgerConfig

UNSCOPED_REASON = (
    "{actions}: read-only EC2 Describe* and Price List GetProducts actions do not "
    "support resource-level permissions; AWS requires Resource '*' for them "
    "(fsx:DescribeFileSystems lists every file system of the account)."
)


class FunctionGrants:
    """Grants functions what the catalog says, on the stack's shared resources."""

    def __init__(
        self,
        stack: Stack,
        *,
        ledger: LedgerTable,
        reports: ReportsBucket,
        topics: AlertTopics,
        settings: StackSettings,
        sweep: SweepFanOut | None = None,
    ) -> None:
        self.stack = stack
        self.sweep = sweep
        # The roles that assume the tracker role (its trust names them exactly).
        self.member_reaching: list[iam.IRole] = []
        self.ledger = ledger
        self.reports = reports
        self.topics = topics
        self.settings = settings
        self.actions = BudgetActionPermissions(
            stack, settings.ledger.auto_stop.tag_key, settings.region, settings.account
        )

    def grant(self, function: LedgerFunction, grants: Grants) -> None:
        role = function.role
        if grants.reports_write:
            self.reports.grant_write(role)
        if grants.ledger == "read_write":
            self.ledger.grant_read_write_data(role)
        else:
            self.ledger.grant_read_data(role)
        if grants.ledger_put_keys:
            self.ledger.grant_writes(
                role, leading_keys=grants.ledger_put_keys, actions=("dynamodb:PutItem",)
            )
        if grants.manages_recipients:
            self.topics.grant_manage_recipients(role)
        if grants.alarm_actions:
            self._grant_alarm_actions(role, grants.alarm_actions)
        if grants.training_reads:
            self._grant_training_reads(role, grants.training_reads)
        if grants.stops_instances:
            self._grant_stop_instances(role)
        if grants.stops_training_jobs:
            self.actions.grant_training_stops(role)
        scp = self.settings.ledger.budget_actions.deny_with == "scp"
        if grants.manages_deny_policies and scp:
            self.actions.grant_service_control_policies(role, self.settings.ledger.accounts)
        elif grants.manages_deny_policies or (grants.detaches_deny_policies and not scp):
            self.actions.grant_deny_policies(
                role,
                manage=grants.manages_deny_policies,
                principals=self.settings.ledger.budget_actions.deny_principals,
            )
        if grants.assumes_member_role:
            self._grant_member_role(role)
        if grants.sends_sweep_units and self.sweep is not None:
            self.sweep.grant_send(role)
        if grants.lists_organization:
            self._grant_account_list(function, grants)
        if Topic.TEAM in grants.publishes:
            self.topics.grant_team_publish(role)
        if Topic.FINANCE in grants.publishes:
            self.topics.grant_publish(self.topics.finance, role)
        if grants.unscoped_reads:
            actions = grants.unscoped_reads
            function.grant_unscoped(actions, UNSCOPED_REASON.format(actions=", ".join(actions)))
        if Topic.ADMIN in grants.publishes:
            self.topics.grant_publish(self.topics.admin, role)
        if grants.data_exports_read:
            _grant_data_exports_read(role, self.settings.ledger)

    def _grant_alarm_actions(self, role: iam.IRole, actions: tuple[str, ...]) -> None:
        """CloudWatch actions on this product's own alarms, by their name prefix."""
        prefix = self.settings.ledger.utilization.alarm_prefix
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=list(actions),
                resources=[
                    self.stack.format_arn(
                        service="cloudwatch",
                        resource="alarm",
                        resource_name=f"{prefix}*",
                        arn_format=ArnFormat.COLON_RESOURCE_NAME,
                    )
                ],
            )
        )
        acknowledge(
            role,
            "IAM5",
            "Limited to this product's own alarms, by their name prefix "
            "(one pair of alarms per running accelerator instance).",
            finding=f"Resource::arn:<AWS::Partition>:cloudwatch:{self.settings.region}:"
            f"{self.settings.account}:alarm:{prefix}*",
        )

    def _grant_training_reads(self, role: iam.IRole, actions: tuple[str, ...]) -> None:
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=list(actions),
                resources=[
                    self.stack.format_arn(
                        service="sagemaker", resource="training-job", resource_name="*"
                    )
                ],
            )
        )
        acknowledge(
            role,
            "IAM5",
            "DescribeTrainingJob / ListTags on this account's training jobs: the "
            "ended job's billed seconds (any job the tracker sees an event of).",
            finding=f"Resource::arn:<AWS::Partition>:sagemaker:{self.settings.region}:"
            f"{self.settings.account}:training-job/*",
        )

    def _grant_stop_instances(self, role: iam.IRole) -> None:
        """Stop only instances that opted in to auto-stop (an IAM tag condition); the
        catalog grants it only while auto-stop is on (dry run too: it stops nothing)."""
        tag_key = self.settings.ledger.auto_stop.tag_key
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["ec2:StopInstances"],
                resources=[
                    self.stack.format_arn(service="ec2", resource="instance", resource_name="*")
                ],
                conditions={"StringEquals": {f"aws:ResourceTag/{tag_key}": "true"}},
            )
        )
        acknowledge(
            role,
            "IAM5",
            "ec2:StopInstances on instances only where the auto-stop opt-in tag "
            f"{tag_key}=true is set (IAM tag condition).",
            finding=f"Resource::arn:<AWS::Partition>:ec2:{self.settings.region}:"
            f"{self.settings.account}:instance/*",
        )

    def _grant_member_role(self, role: iam.IRole) -> None:
        """Assume the tracker role only (it, and only it, assumes the member roles)."""
        accounts = self.settings.ledger.accounts
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["sts:AssumeRole"], resources=[tracker_role_arn(self.stack, accounts)]
            )
        )
        if role not in self.member_reaching:
            self.member_reaching.append(role)

    def _grant_account_list(self, function: LedgerFunction, grants: Grants) -> None:
        """The trust check's account list and the member accounts' health records:
        organizations:ListAccounts (with the tracker's own role, when no list role in
        the management account is configured) and writes to the ACCOUNTS items."""
        accounts = self.settings.ledger.accounts
        if accounts.organization_id and not accounts.organizations_role_name:
            function.grant_unscoped(
                ("organizations:ListAccounts",),
                "organizations:ListAccounts supports no resource-level permissions.",
            )
        elif accounts.organization_id:
            self._grant_member_role(function.role)
        if grants.ledger != "read_write":
            self.ledger.grant_writes(
                function.role,
                leading_keys=("ACCOUNTS",),
                actions=("dynamodb:PutItem", "dynamodb:UpdateItem"),
            )


def _grant_data_exports_read(role: iam.IRole, config: LedgerConfig) -> None:
    """The reconcile function reads the configured Data Exports (CUR 2.0) objects: list
    the export's prefix and get its objects, nothing else of the bucket."""
    bucket, prefix = config.reconcile.data_exports_bucket, config.reconcile.data_exports_prefix
    if not bucket:
        return
    role.add_to_principal_policy(
        iam.PolicyStatement(
            actions=["s3:ListBucket"],
            resources=[f"arn:aws:s3:::{bucket}"],
            conditions={"StringLike": {"s3:prefix": [f"{prefix}*"]}},
        )
    )
    objects = f"arn:aws:s3:::{bucket}/{prefix}*"
    role.add_to_principal_policy(iam.PolicyStatement(actions=["s3:GetObject"], resources=[objects]))
    acknowledge(
        role,
        "IAM5",
        "s3:GetObject on the configured AWS Data Exports prefix only (ledger.reconcile."
        "data_exports_prefix): AWS names the export's files per bill period and run.",
        finding=f"Resource::{objects}",
    )
