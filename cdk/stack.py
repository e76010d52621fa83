"""The cost tracker stack: composes the constructs, makes every function of the
catalog (``shared.app.functions``) and grants it what the catalog says, and wires the
outputs.

It defines no resource itself; see ``cdk/constructs/`` (and ``cdk/iam_grants.py``).
"""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, Duration, Stack
from constructs import Construct

from cdk.constructs.access_policies import ApiAccessPolicies
from cdk.constructs.alert_topics import AlertTopics
from cdk.constructs.budget_actions import CrossingTimerQueue
from cdk.constructs.checkpoint_buckets import CheckpointBuckets
from cdk.constructs.dashboard import TrackerDashboard
from cdk.constructs.dlq_alarms import DeadLetterAlarms
from cdk.constructs.ec2_events import Ec2EventRules
from cdk.constructs.event_bus_policy import AllowedAccountsBusPolicy, OrganizationBusPolicy
from cdk.constructs.job_cost_api import JobCostApi
from cdk.constructs.lambda_factory import RETENTION, LambdaFactory, LedgerFunction
from cdk.constructs.ledger_table import LedgerTable
from cdk.constructs.reports_bucket import ReportsBucket
from cdk.constructs.schedules import Schedules
from cdk.constructs.sweep_fanout import SweepFanOut
from cdk.constructs.tracker_role import TrackerRole
from cdk.iam_grants import FunctionGrants
from cdk.stack_settings import StackSettings
from shared.app.functions import BY_NAME, COMMON_ENVIRONMENT, FUNCTIONS, Function, schedules
from shared.app.triggers import Queue, WorkQueue


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
        sweep = SweepFanOut(self, "SweepFanOut", trigger=_work_queue())
        timers = CrossingTimerQueue(self, "CrossingTimers")
        # The value of every environment variable a function of the catalog names.
        environment = {
            "TABLE_NAME": table.table_name,
            "FINANCE_TOPIC_ARN": topics.finance.topic_arn,
            "TEAM_TOPIC_ARN": topics.team.topic_arn,
            "ADMIN_TOPIC_ARN": topics.admin.topic_arn,
            # team -> its Slack (Chatbot) topic, for teams that have one.
            "TEAM_CHAT_TOPICS": self.to_json_string(
                {team: topic.topic_arn for team, topic in topics.chat_topics.items()}
            ),
            "LEDGER_CONFIG": settings.ledger.model_dump_json(),
            "REPORT_BUCKET": reports.bucket.bucket_name,
            "SWEEP_QUEUE_URL": sweep.queue.queue_url,
            "CROSSING_TIMER_QUEUE_URL": timers.queue.queue_url,
        }
        factory = LambdaFactory(
            self,
            "Functions",
            environment={name: environment[name] for name in COMMON_ENVIRONMENT},
            log_retention_days=settings.log_retention_days,
        )
        grants = FunctionGrants(
            self, ledger=ledger, reports=reports, topics=topics, settings=settings, sweep=sweep
        )
        made: dict[str, LedgerFunction] = {}
        # Event and schedule functions by name, then the API.
        for spec in sorted(FUNCTIONS, key=lambda f: (not f.asynchronous, f.name)):
            made[spec.name] = factory.function(
                spec.name,
                timeout=Duration.seconds(spec.timeout_seconds),
                memory_mb=spec.memory_mb,
                asynchronous=spec.asynchronous,
                # The event path keeps capacity however busy the API or schedules are;
                # the API has its own, so a flood of calls stops at it.
                reserved_concurrency=reserved_concurrency(settings, spec),
                description=f"costtracker: {spec.description}",
                extra_environment={name: environment[name] for name in spec.environment} or None,
                pyarrow=spec.uses_pyarrow,
            )
            grants.grant(made[spec.name], spec.grants_for(settings.ledger))
        for spec in FUNCTIONS:  # each queue-triggered function and the one that sends to it
            if isinstance(spec.trigger, Queue):
                timers.connect(made[spec.trigger.sender], made[spec.name])
        for spec in FUNCTIONS:  # every other function given the queue plans timers too
            if "CROSSING_TIMER_QUEUE_URL" in spec.environment:
                timers.queue.grant_send_messages(made[spec.name].role)
        job_cost_api = made.pop("job_cost_api")
        worker = made.pop("sweep_worker")
        sweep.feed(worker.function, settings.sweep_concurrency)
        if grants.member_reaching:
            TrackerRole(
                self,
                "TrackerRole",
                accounts=settings.ledger.accounts,
                assumed_by=grants.member_reaching,
            )
        asynchronous = made

        Ec2EventRules(self, "Ec2Events", functions=asynchronous, ledger_config=settings.ledger)
        Schedules(
            self,
            "Schedules",
            functions=asynchronous,
            schedules=schedules(settings.ledger.summary.time_utc, settings.ledger.finance_timezone),
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
        if settings.ledger.accounts.allowed_accounts:
            AllowedAccountsBusPolicy(
                self, "AllowedAccountsBus", accounts=settings.ledger.accounts.allowed_accounts
            )
        dead_letter_queues = {
            name: fn.dead_letter_queue
            for name, fn in asynchronous.items()
            if fn.dead_letter_queue is not None
        }
        dead_letter_queues["budget_timer"] = timers.dead_letters  # its queue's redrive
        dead_letter_queues["sweep_worker"] = sweep.dead_letter_queue
        dead_letters = DeadLetterAlarms(
            self, "DeadLetterAlarms", queues=dead_letter_queues, topic=topics.admin
        )

        TrackerDashboard(
            self,
            "Dashboard",
            functions={
                **{name: fn.function for name, fn in asynchronous.items()},
                "sweep_worker": worker.function,
                "job_cost_api": job_cost_api.function,
            },
            queues=dead_letter_queues,
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


def reserved_concurrency(settings: StackSettings, spec: Function) -> int | None:
    """A function's reserved concurrency (None: none): each event-path function's, and the
    API's; the schedules share the account's unreserved pool."""
    if spec.event_path:
        return settings.event_reserved_concurrency or None
    if spec.name == "job_cost_api":
        return settings.api_reserved_concurrency or None
    return None


def _work_queue() -> WorkQueue:
    trigger = BY_NAME["sweep_worker"].trigger
    assert isinstance(trigger, WorkQueue)
    return trigger
