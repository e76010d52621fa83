"""Scheduled EventBridge rules of the catalog's schedules (``shared.app.functions``; UTC)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from aws_cdk import Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from constructs import Construct

from cdk.constructs.lambda_factory import LedgerFunction, _pascal
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
        for schedule in schedules:
            target = functions[schedule.function]
            if target.dead_letter_queue is None:
                raise ValueError(f"{schedule.function} is scheduled and must be asynchronous")
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
