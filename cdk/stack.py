"""The cost tracker stack: composes the constructs, wires grants and outputs.

It defines no resource itself; see ``cdk/constructs/``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aws_cdk import ArnFormat, CfnOutput, Duration, Stack
from aws_cdk import aws_iam as iam
from constructs import Construct

from cdk.constructs.access_policies import ApiAccessPolicies
from cdk.constructs.alert_topics import AlertTopics
from cdk.constructs.checkpoint_buckets import CheckpointBuckets
from cdk.constructs.dashboard import TrackerDashboard
from cdk.constructs.dlq_alarms import DeadLetterAlarms
from cdk.constructs.ec2_events import Ec2EventRules
from cdk.constructs.event_bus_policy import OrganizationBusPolicy
from cdk.constructs.job_cost_api import JobCostApi
from cdk.constructs.lambda_factory import RETENTION, LambdaFactory
from cdk.constructs.ledger_table import LedgerTable
from cdk.constructs.reports_bucket import ReportsBucket
from cdk.constructs.schedules import Schedules
from cdk.nag import acknowledge
from cdk.settings import StackSettings
from shared.config import LedgerConfig
from shared.event_patterns import EVENT_RULES, SCHEDULES, schedules

# Read-only EC2 and Price List actions the ledger prices instances with. AWS does
# not support resource-level permissions for any of them (Describe* / GetProducts
# only accept Resource "*"), so they cannot be scoped further.
INSTANCE_READ_ACTIONS = ("ec2:DescribeInstances", "ec2:DescribeVolumes")
PRICE_READ_ACTIONS = ("ec2:DescribeSpotPriceHistory", "pricing:GetProducts")
# Capacity Blocks / ODCRs an instance runs in (Describe*: Resource "*" only).
RESERVATION_READ_ACTIONS = ("ec2:DescribeCapacityReservations",)
# Ended SageMaker training jobs' billed figures (scoped to training jobs).
TRAINING_READ_ACTIONS = ("sagemaker:DescribeTrainingJob", "sagemaker:ListTags")
# ce:GetCostAndUsage likewise only accepts Resource "*".
# Partition keys the API writes: budgets, their history, cached prices.
API_WRITE_KEYS = ("BUDGETS", "BUDGETS_HISTORY#*", "PRICE#*")
UNSCOPED_REASON = (
    "{actions}: read-only EC2 Describe* and Price List GetProducts actions do not "
    "support resource-level permissions; AWS requires Resource '*' for them."
)


@dataclass(frozen=True)
class AsyncFunctionSpec:
    """How an event- or schedule-driven function is wired."""

    timeout_seconds: int
    description: str
    unscoped_reads: tuple[str, ...] = ()
    publishes_admin_alerts: bool = False
    publishes_team_alerts: bool = False
    publishes_finance_alerts: bool = False
    writes_ledger: bool = True
    # CloudWatch actions on this product's own alarms (by name prefix) only.
    alarm_actions: tuple[str, ...] = ()
    # May stop instances, only those tagged for auto-stop (an IAM tag condition).
    stops_instances: bool = False
    # Writes the daily reports (summaries, FOCUS) to the reports bucket.
    writes_reports: bool = False
    # Unscoped reads granted only when a feature is on (a LedgerConfig predicate).
    feature_reads: tuple[str, ...] = ()
    feature: Callable[[LedgerConfig], bool] | None = None
    # SageMaker reads on this account's training jobs only.
    training_reads: tuple[str, ...] = ()


# Every function named in EVENT_RULES or SCHEDULES needs an entry here: its grants
# are a reviewed decision, never a default.
ASYNC_FUNCTIONS: dict[str, AsyncFunctionSpec] = {
    "instance_state": AsyncFunctionSpec(
        60,
        "EC2 state changes -> job ledger",
        INSTANCE_READ_ACTIONS + PRICE_READ_ACTIONS + RESERVATION_READ_ACTIONS,
    ),
    "spot_interruption": AsyncFunctionSpec(
        60,
        "spot interruption / rebalance notices -> instance record",
        INSTANCE_READ_ACTIONS + PRICE_READ_ACTIONS + RESERVATION_READ_ACTIONS,
    ),
    "training_job_state": AsyncFunctionSpec(
        60,
        "SageMaker training job state changes -> job ledger",
        training_reads=TRAINING_READ_ACTIONS,
    ),
    "capacity_block": AsyncFunctionSpec(
        60,
        "Capacity Block delivered / expiration warning -> reservation record",
        RESERVATION_READ_ACTIONS + PRICE_READ_ACTIONS,
    ),
    "reservation_refresh": AsyncFunctionSpec(
        300,
        "refresh capacity reservations daily; alert admins of underused ones",
        RESERVATION_READ_ACTIONS + PRICE_READ_ACTIONS,
        publishes_admin_alerts=True,
    ),
    "checkpoint": AsyncFunctionSpec(
        60, "S3 checkpoint objects -> checkpoint records", ("pricing:GetProducts",)
    ),
    "alarm_lifecycle": AsyncFunctionSpec(
        60,
        "make / remove per-instance utilization alarms",
        INSTANCE_READ_ACTIONS,
        writes_ledger=False,
        alarm_actions=(
            "cloudwatch:PutMetricAlarm",
            "cloudwatch:DeleteAlarms",
            "cloudwatch:TagResource",
        ),
    ),
    "alarm_state": AsyncFunctionSpec(
        60,
        "alarm state changes -> idle / input-bound / no-metrics alerts, auto-stop",
        INSTANCE_READ_ACTIONS + PRICE_READ_ACTIONS + RESERVATION_READ_ACTIONS,
        publishes_team_alerts=True,
        stops_instances=True,
    ),
    "alarm_sweep": AsyncFunctionSpec(
        300,
        "delete orphan alarms, re-consider auto-stop",
        writes_ledger=False,
        alarm_actions=("cloudwatch:DescribeAlarms", "cloudwatch:DeleteAlarms"),
        stops_instances=True,
    ),
    "budget_tick": AsyncFunctionSpec(
        55,
        "evaluate budgets every minute; forecasts and anomalies",
        publishes_finance_alerts=True,
    ),
    "day_boundary": AsyncFunctionSpec(300, "mark running jobs active on the new UTC day"),
    "ledger_sweep": AsyncFunctionSpec(
        300,
        "infer missed EC2 state events from DescribeInstances",
        INSTANCE_READ_ACTIONS + PRICE_READ_ACTIONS + RESERVATION_READ_ACTIONS,
    ),
    "reconcile": AsyncFunctionSpec(
        300,
        "reconcile settled days with Cost Explorer (opt-in)",
        feature_reads=("ce:GetCostAndUsage",),
        feature=lambda config: config.reconcile.enabled,
    ),
    "daily_summary": AsyncFunctionSpec(
        300,
        "the previous day's tagged summary and FOCUS export",
        publishes_finance_alerts=True,
        writes_reports=True,
    ),
    "price_backfill": AsyncFunctionSpec(
        300, "price unpriced segments, alert on missing prices", PRICE_READ_ACTIONS, True
    ),
}


def async_function_names() -> list[str]:
    """The functions driven by EventBridge, from shared.event_patterns."""
    return sorted({*EVENT_RULES, *(schedule.function for schedule in SCHEDULES)})


class CostTrackerStack(Stack):
    def __init__(
        self, scope: Construct, construct_id: str, *, settings: StackSettings, **kwargs: Any
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)

        ledger = LedgerTable(self, "Ledger")
        reports = ReportsBucket(self, "Reports")
        table = ledger.table
        topics = AlertTopics(
            self,
            "Alerts",
            finance_emails=settings.finance_emails,
            teams=settings.teams,
            admin_emails=settings.admin_emails,
            budgets=settings.ledger.budgets,
        )
        factory = LambdaFactory(
            self,
            "Functions",
            environment={
                "TABLE_NAME": table.table_name,
                "FINANCE_TOPIC_ARN": topics.finance.topic_arn,
                "TEAM_TOPIC_ARN": topics.team.topic_arn,
                "ADMIN_TOPIC_ARN": topics.admin.topic_arn,
                # team -> its Slack (Chatbot) topic, for teams that have one.
                "TEAM_CHAT_TOPICS": self.to_json_string(
                    {team: topic.topic_arn for team, topic in topics.chat_topics.items()}
                ),
                "LEDGER_CONFIG": settings.ledger.model_dump_json(),
            },
            log_retention_days=settings.log_retention_days,
        )
        unwired = [name for name in async_function_names() if name not in ASYNC_FUNCTIONS]
        if unwired:
            raise ValueError(
                f"no wiring for event/schedule function(s) {', '.join(unwired)}: "
                "add an AsyncFunctionSpec to ASYNC_FUNCTIONS in cdk/stack.py"
            )
        asynchronous = {}
        for name in async_function_names():
            spec = ASYNC_FUNCTIONS[name]
            function = factory.function(
                name,
                timeout=Duration.seconds(spec.timeout_seconds),
                asynchronous=True,
                # The event path keeps capacity however busy the API or schedules are.
                reserved_concurrency=(
                    settings.event_reserved_concurrency or None if name in EVENT_RULES else None
                ),
                description=f"costtracker: {spec.description}",
                extra_environment=(
                    {"REPORT_BUCKET": reports.bucket.bucket_name} if spec.writes_reports else None
                ),
            )
            if spec.writes_reports:
                reports.grant_write(function.role)
            # Grants: least privilege per function.
            if spec.writes_ledger:
                ledger.grant_read_write_data(function.role)
            else:
                ledger.grant_read_data(function.role)
            if spec.alarm_actions:
                function.role.add_to_policy(
                    iam.PolicyStatement(
                        actions=list(spec.alarm_actions),
                        resources=[
                            self.format_arn(
                                service="cloudwatch",
                                resource="alarm",
                                resource_name=f"{settings.ledger.utilization.alarm_prefix}*",
                                arn_format=ArnFormat.COLON_RESOURCE_NAME,
                            )
                        ],
                    )
                )
                acknowledge(
                    function.role,
                    "IAM5",
                    "Limited to this product's own alarms, by their name prefix "
                    "(one pair of alarms per running accelerator instance).",
                    finding=f"Resource::arn:<AWS::Partition>:cloudwatch:{settings.region}:"
                    f"{settings.account}:alarm:{settings.ledger.utilization.alarm_prefix}*",
                )
            if spec.training_reads:
                function.role.add_to_policy(
                    iam.PolicyStatement(
                        actions=list(spec.training_reads),
                        resources=[
                            self.format_arn(
                                service="sagemaker", resource="training-job", resource_name="*"
                            )
                        ],
                    )
                )
                acknowledge(
                    function.role,
                    "IAM5",
                    "DescribeTrainingJob / ListTags on this account's training jobs: the "
                    "ended job's billed seconds (any job the tracker sees an event of).",
                    finding=f"Resource::arn:<AWS::Partition>:sagemaker:{settings.region}:"
                    f"{settings.account}:training-job/*",
                )
            # Stopping instances only when auto-stop is on (dry run too: it stops nothing).
            if spec.stops_instances and settings.ledger.auto_stop.enabled:
                function.role.add_to_policy(
                    iam.PolicyStatement(
                        actions=["ec2:StopInstances"],
                        resources=[
                            self.format_arn(service="ec2", resource="instance", resource_name="*")
                        ],
                        conditions={
                            "StringEquals": {
                                f"aws:ResourceTag/{settings.ledger.auto_stop.tag_key}": "true"
                            }
                        },
                    )
                )
                acknowledge(
                    function.role,
                    "IAM5",
                    "ec2:StopInstances on instances only where the auto-stop opt-in tag "
                    f"{settings.ledger.auto_stop.tag_key}=true is set (IAM tag condition).",
                    finding=f"Resource::arn:<AWS::Partition>:ec2:{settings.region}:"
                    f"{settings.account}:instance/*",
                )
            organization = settings.ledger.accounts.organization_id
            if organization and set(INSTANCE_READ_ACTIONS) <= set(spec.unscoped_reads):
                self._grant_member_role(function.role, settings)
            if spec.publishes_team_alerts:
                topics.grant_team_publish(function.role)
            if spec.publishes_finance_alerts:
                topics.grant_publish(topics.finance, function.role)
            unscoped = spec.unscoped_reads
            if spec.feature is not None and spec.feature(settings.ledger):
                unscoped += spec.feature_reads
            if unscoped:
                function.grant_unscoped(
                    unscoped, UNSCOPED_REASON.format(actions=", ".join(unscoped))
                )
            if spec.publishes_admin_alerts:
                topics.grant_publish(topics.admin, function.role)
            if name == "reconcile" and spec.feature is not None and spec.feature(settings.ledger):
                _grant_data_exports_read(function.role, settings.ledger)
            asynchronous[name] = function
        job_cost_api = factory.function(
            "job_cost_api",
            timeout=Duration.seconds(29),
            asynchronous=False,
            description="costtracker: job cost REST API",
        )
        ledger.grant_read_data(job_cost_api.role)
        # The API writes budgets with their history, and caches the prices it looks up:
        # PutItem on those partitions only.
        ledger.grant_writes(
            job_cost_api.role, leading_keys=API_WRITE_KEYS, actions=("dynamodb:PutItem",)
        )
        # PUT/DELETE /budgets subscribe and unsubscribe the budget's recipients.
        topics.grant_manage_recipients(job_cost_api.role)
        # GET /prices answers from the cache, the snapshot or a Price List call.
        job_cost_api.grant_unscoped(
            PRICE_READ_ACTIONS, UNSCOPED_REASON.format(actions=", ".join(PRICE_READ_ACTIONS))
        )

        Ec2EventRules(self, "Ec2Events", functions=asynchronous, ledger_config=settings.ledger)
        Schedules(
            self,
            "Schedules",
            functions=asynchronous,
            schedules=schedules(settings.ledger.summary.time_utc),
        )
        CheckpointBuckets(self, "CheckpointBuckets", buckets=settings.ledger.checkpoint.buckets)
        api = JobCostApi(
            self,
            "JobCostApi",
            handler=job_cost_api.function,
            log_retention=RETENTION[settings.log_retention_days],
            throttling=settings.api_throttling,
        )
        policies = ApiAccessPolicies(self, "ApiAccess", api=api.api)
        if settings.ledger.accounts.organization_id:
            OrganizationBusPolicy(
                self, "OrganizationBus", organization_id=settings.ledger.accounts.organization_id
            )
        dead_letters = DeadLetterAlarms(
            self,
            "DeadLetterAlarms",
            queues={
                name: fn.dead_letter_queue
                for name, fn in asynchronous.items()
                if fn.dead_letter_queue is not None
            },
            topic=topics.admin,
        )

        TrackerDashboard(
            self,
            "Dashboard",
            functions={
                **{name: fn.function for name, fn in asynchronous.items()},
                "job_cost_api": job_cost_api.function,
            },
            queues={
                name: fn.dead_letter_queue
                for name, fn in asynchronous.items()
                if fn.dead_letter_queue is not None
            },
            alarms=list(dead_letters.alarms.values()),
        )

        CfnOutput(
            self,
            "ApiUrl",
            value=api.api.url,
            description="Job cost API (IAM auth): costtracker jobs ls --endpoint <ApiUrl>",
        )
        for role, policy in policies.policies.items():
            CfnOutput(
                self,
                f"{role.capitalize()}PolicyArn",
                value=policy.managed_policy_arn,
                description=f"Attach to the IAM roles of {ApiAccessPolicies.AUDIENCE[role]} "
                "(execute-api:Invoke on their routes; ledger.access decides what they see)",
            )
        CfnOutput(
            self,
            "InstanceStateFunctionName",
            value=asynchronous["instance_state"].function.function_name,
            description="The EC2 state-change function (the e2e suite invokes it)",
        )
        CfnOutput(self, "TableName", value=table.table_name)
        CfnOutput(self, "ReportBucketName", value=reports.bucket.bucket_name)
        CfnOutput(self, "FinanceTopicArn", value=topics.finance.topic_arn)
        CfnOutput(self, "TeamTopicArn", value=topics.team.topic_arn)
        CfnOutput(self, "AdminTopicArn", value=topics.admin.topic_arn)

    def _grant_member_role(self, role: iam.IRole, settings: StackSettings) -> None:
        """Assume the member stack's read-only role, in the organisation's accounts only."""
        name = settings.ledger.accounts.member_role_name
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["sts:AssumeRole"],
                resources=[f"arn:{self.partition}:iam::*:role/{name}"],
                conditions={
                    "StringEquals": {"aws:ResourceOrgID": settings.ledger.accounts.organization_id}
                },
            )
        )
        acknowledge(
            role,
            "IAM5",
            f"sts:AssumeRole on the member stack's read-only role {name} in any account of "
            "the organisation (aws:ResourceOrgID); the member accounts are not known at synth.",
            finding=f"Resource::arn:<AWS::Partition>:iam::*:role/{name}",
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
