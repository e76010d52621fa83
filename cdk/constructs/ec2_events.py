"""EventBridge rules from ``shared.event_patterns.EVENT_RULES`` (EC2 events, and S3
checkpoint events when defined there): one rule per function, with exactly that
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
from shared.config import LedgerConfig
from shared.event_patterns import EVENT_RULES


def rule_patterns(config: LedgerConfig) -> dict[str, dict[str, Any]]:
    """EVENT_RULES, with the checkpoint rule narrowed to the configured buckets."""
    patterns = dict(EVENT_RULES)
    if "checkpoint" in patterns:
        from shared.event_patterns import checkpoint_rule

        patterns["checkpoint"] = checkpoint_rule(config.checkpoint.buckets)
    return patterns


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
        for name, pattern in rule_patterns(ledger_config).items():
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
