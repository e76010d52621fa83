"""The catalog's schedules (``shared.app.functions``): EventBridge rules on UTC, and the
finance day's schedules (day boundary, daily summary) on the finance time zone's clock.

EventBridge rules' cron is UTC only, so a finance day outside UTC (Seoul's day starts at
15:00Z, New York's moves with daylight saving) is an EventBridge Scheduler schedule with
``ScheduleExpressionTimezone``: it fires at the local time through the change. Its target
gets the event a rule would send (``Scheduled Event``, the scheduled time as ``time``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from aws_cdk import CfnElement, Duration, Stack, TimeZone
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_scheduler as scheduler
from aws_cdk import aws_scheduler_targets as scheduler_targets
from constructs import Construct

from cdk.constructs.lambda_factory import LedgerFunction, _pascal
from cdk.nag import acknowledge
from shared.app.triggers import Schedule


class Schedules(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        functions: Mapping[str, LedgerFunction],
        schedules: Sequence[Schedule],
    ) -> None:
        super().__init__(scope, construct_id)
        self.rules: dict[str, events.Rule] = {}
        self.local: dict[str, scheduler.Schedule] = {}
        self._role: iam.Role | None = None
        for schedule in schedules:
            target = functions[schedule.function]
            if target.dead_letter_queue is None:
                raise ValueError(f"{schedule.function} is scheduled and must be asynchronous")
            if schedule.local:
                self.local[schedule.function] = self._local_schedule(schedule, target)
                continue
            rule = events.Rule(
                self,
                _pascal(schedule.function),
                description=f"costtracker: {schedule.description}"[:512],
                schedule=events.Schedule.cron(**schedule.cron()),
            )
            rule.add_target(
                targets.LambdaFunction(
                    target.function,
                    dead_letter_queue=target.dead_letter_queue,
                    retry_attempts=2,
                    max_event_age=Duration.hours(1),
                )
            )
            self.rules[schedule.function] = rule

    def _local_schedule(self, schedule: Schedule, target: LedgerFunction) -> scheduler.Schedule:
        """An EventBridge Scheduler schedule on the zone's clock, invoking the function
        with a schedule event (its own role may invoke only this function and send to
        its dead-letter queue)."""
        assert target.dead_letter_queue is not None
        stack = Stack.of(self)
        role = self._scheduler_role()
        fields = schedule.cron()
        tick = {
            "version": "0",
            "id": scheduler.ContextAttribute.execution_id,
            "detail-type": "Scheduled Event",
            "source": "aws.scheduler",
            "account": stack.account,
            "time": scheduler.ContextAttribute.scheduled_time,
            "region": stack.region,
            "resources": [scheduler.ContextAttribute.schedule_arn],
            "detail": {},
        }
        made = scheduler.Schedule(
            self,
            _pascal(schedule.function),
            description=f"costtracker: {schedule.description} ({schedule.timezone})"[:512],
            schedule=scheduler.ScheduleExpression.cron(
                minute=fields["minute"],
                hour=fields["hour"],
                time_zone=TimeZone.of(schedule.timezone),
            ),
            target=scheduler_targets.LambdaInvoke(
                target.function,
                input=scheduler.ScheduleTargetInput.from_object(tick),
                dead_letter_queue=target.dead_letter_queue,
                retry_attempts=2,
                max_event_age=Duration.hours(1),
                role=role,
            ),
        )
        acknowledge(
            role,
            "IAM5",
            "lambda:InvokeFunction on this one function and its qualified ARNs (CDK's "
            "grant on a function adds <arn>:* for versions and aliases).",
            finding=f"Resource::<{stack.get_logical_id(_cfn(target.function))}.Arn>:*",
        )
        return made

    def _scheduler_role(self) -> iam.Role:
        """One role for the finance-day schedules, assumable by EventBridge Scheduler on
        behalf of this account only; the targets add what it may invoke and send."""
        if self._role is None:
            account = Stack.of(self).account
            self._role = iam.Role(
                self,
                "SchedulerRole",
                description="costtracker: EventBridge Scheduler invokes the finance-day functions",
                assumed_by=iam.ServicePrincipal(
                    "scheduler.amazonaws.com",
                    conditions={"StringEquals": {"aws:SourceAccount": account}},
                ),
            )
        return self._role


def _cfn(function: lambda_.Function) -> CfnElement:
    child = function.node.default_child
    assert isinstance(child, CfnElement)
    return child
