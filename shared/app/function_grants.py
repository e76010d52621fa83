"""What a function may do, as data (no CDK import): the catalog
(``shared.app.functions``) gives each function its ``Grants``, and ``cdk/iam_grants.py``
turns them into IAM statements, least privilege."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from shared.config.ledger import LedgerConfig

# Read-only EC2 and Price List actions the ledger prices instances with. AWS does
# not support resource-level permissions for any of them (Describe* / GetProducts
# only accept Resource "*"), so they cannot be scoped further.
INSTANCE_READ_ACTIONS = ("ec2:DescribeInstances", "ec2:DescribeVolumes")
PRICE_READ_ACTIONS = ("ec2:DescribeSpotPriceHistory", "pricing:GetProducts")
# Capacity Blocks / ODCRs an instance runs in (Describe*: Resource "*" only).
RESERVATION_READ_ACTIONS = ("ec2:DescribeCapacityReservations",)
# Ended SageMaker training jobs' billed figures (scoped to training jobs).
TRAINING_READ_ACTIONS = ("sagemaker:DescribeTrainingJob", "sagemaker:ListTags")
# Measured utilization (rule 10): GetMetricData has no resource-level permissions.
METRIC_READ_ACTIONS = ("cloudwatch:GetMetricData",)
# FSx for Lustre file systems (DescribeFileSystems lists every file system of the account).
FSX_READ_ACTIONS = ("fsx:DescribeFileSystems",)
# ce:GetCostAndUsage likewise only accepts Resource "*".
COST_EXPLORER_READ_ACTIONS = ("ce:GetCostAndUsage",)
# Partition keys the API writes: budgets, their history, the recipients' subscriptions it
# made, cached prices, released budget actions and the alerts announcing a release.
API_WRITE_KEYS = ("BUDGETS", "BUDGETS_HISTORY#*", "RECIPIENTS", "PRICE#*", "ACTIONS", "OUTBOX")
DESCRIBE_AND_PRICE = INSTANCE_READ_ACTIONS + PRICE_READ_ACTIONS + RESERVATION_READ_ACTIONS


class Topic(StrEnum):
    """An alert topic a function publishes to."""

    TEAM = "team"
    FINANCE = "finance"
    ADMIN = "admin"


class Feature(StrEnum):
    """An optional feature of the ledger configuration that some grants depend on."""

    AUTO_STOP = "auto_stop"
    RECONCILE = "reconcile"
    ORGANIZATION = "organization"
    BUDGET_ACTIONS = "budget_actions"


def feature_on(feature: Feature, config: LedgerConfig) -> bool:
    if feature is Feature.AUTO_STOP:
        return config.auto_stop.enabled
    if feature is Feature.RECONCILE:
        return config.reconcile.enabled
    if feature is Feature.BUDGET_ACTIONS:
        return config.budget_actions.enabled
    return bool(config.accounts.organization_id)


@dataclass(frozen=True)
class Grants:
    """What a function may do, least privilege; ``cdk/iam_grants.py`` maps each to IAM."""

    # The ledger table: item reads and Query ("read"), plus PutItem / UpdateItem.
    ledger: Literal["read", "read_write"] = "read_write"
    # PutItem only, and only on items whose partition key matches one of these.
    ledger_put_keys: tuple[str, ...] = ()
    # Writes the daily reports (summaries, FOCUS) to the reports bucket.
    reports_write: bool = False
    publishes: tuple[Topic, ...] = ()
    # Subscribes / unsubscribes budget recipients on the finance topic.
    manages_recipients: bool = False
    # Actions without resource-level permissions (granted on Resource "*").
    unscoped_reads: tuple[str, ...] = ()
    # CloudWatch actions on this product's own alarms (by name prefix) only.
    alarm_actions: tuple[str, ...] = ()
    # SageMaker reads on this account's training jobs only.
    training_reads: tuple[str, ...] = ()
    # ec2:StopInstances, only on instances tagged for auto-stop (an IAM tag condition).
    stops_instances: bool = False
    # sagemaker:StopTrainingJob, only on training jobs tagged for auto-stop.
    stops_training_jobs: bool = False
    # iam:CreatePolicy on policy/costtracker/* and attach / detach of those policies only.
    manages_deny_policies: bool = False
    # iam:Detach*Policy of those policies only (the API's release of a deny).
    detaches_deny_policies: bool = False
    # The configured Data Exports (CUR 2.0) prefix: list it, get its objects.
    data_exports_read: bool = False
    # sts:AssumeRole on the member stack's read-only role in the organisation's accounts.
    assumes_member_role: bool = False

    def merged(self, other: Grants) -> Grants:
        """These grants and ``other``'s (the ledger access stays this one's)."""
        return Grants(
            ledger=self.ledger,
            ledger_put_keys=self.ledger_put_keys + other.ledger_put_keys,
            reports_write=self.reports_write or other.reports_write,
            publishes=self.publishes + other.publishes,
            manages_recipients=self.manages_recipients or other.manages_recipients,
            unscoped_reads=tuple(dict.fromkeys(self.unscoped_reads + other.unscoped_reads)),
            alarm_actions=self.alarm_actions + other.alarm_actions,
            training_reads=self.training_reads + other.training_reads,
            stops_instances=self.stops_instances or other.stops_instances,
            stops_training_jobs=self.stops_training_jobs or other.stops_training_jobs,
            manages_deny_policies=self.manages_deny_policies or other.manages_deny_policies,
            detaches_deny_policies=self.detaches_deny_policies or other.detaches_deny_policies,
            data_exports_read=self.data_exports_read or other.data_exports_read,
            assumes_member_role=self.assumes_member_role or other.assumes_member_role,
        )


# What budget actions may do, granted only while ``ledger.budget_actions.enabled``: stop
# opted-in instances and training jobs (re-read first), manage the tracker's own deny
# policies.
BUDGET_ACTION_GRANTS = Grants(
    stops_instances=True,
    stops_training_jobs=True,
    manages_deny_policies=True,
    unscoped_reads=("ec2:DescribeInstances",),
    training_reads=TRAINING_READ_ACTIONS,
)
