"""EventBridge rules of the catalog's event functions (``shared.app.functions``: EC2,
CloudWatch, SageMaker and S3 checkpoint events): one rule per function, with exactly its
pattern, delivering to the function with retries and the function's dead-letter
queue for events EventBridge cannot deliver."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aws_cdk import Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from constructs import Construct

from cdk.constructs.lambda_factory import LedgerFunction, _pascal
from shared.app.functions import event_rules
from shared.config.ledger import LedgerConfig


def event_pattern(pattern: Mapping[str, Any]) -> events.EventPattern:
    """The CDK form of an EventBridge JSON pattern (``detail-type`` -> ``detail_type``).

    An unknown top-level key fails here (TypeError) rather than being dropped.
    """
    return events.EventPattern(**{key.replace("-", "_"): value for key, value in pattern.items()})


class Ec2EventRules(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        functions: Mapping[str, LedgerFunction],
        ledger_config: LedgerConfig,
    ) -> None:
        super().__init__(scope, construct_id)
        self.rules: dict[str, events.Rule] = {}
        for name, pattern in event_rules(ledger_config.checkpoint.buckets).items():
            target = functions[name]
            if target.dead_letter_queue is None:
                raise ValueError(f"{name} is event-driven and must be made asynchronous")
            rule = events.Rule(
                self,
                _pascal(name),
                description=f"costtracker: {', '.join(pattern.get('detail-type', []))} -> {name}",
                event_pattern=event_pattern(pattern),
            )
            rule.add_target(
                targets.LambdaFunction(
                    target.function,
                    dead_letter_queue=target.dead_letter_queue,
                    retry_attempts=2,
                    max_event_age=Duration.hours(2),
                )
            )
            self.rules[name] = rule
