"""CloudWatch Alarm State Change -> utilization condition, team alerts (wiring only)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import runtime
from shared.edge import parse_event
from shared.events import AlarmStateChangeEvent
from shared.services.utilization import record_alarm_change
from shared.telemetry import count, metrics

logger = Logger(service="costtracker")


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics(raise_on_empty_metrics=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    parsed = parse_event(event, AlarmStateChangeEvent, logger)
    logger.append_keys(event_id=parsed.id, alarm=parsed.detail.alarm_name)
    outcome = record_alarm_change(
        runtime.ledger_deps(),
        runtime.notifier(),
        runtime.stopper(),
        event_id=parsed.id,
        alarm_name=parsed.detail.alarm_name,
        state=parsed.detail.state.value,
        state_at=parsed.detail.state.timestamp,
        region=parsed.region,
        account=parsed.account,
    )
    logger.info("alarm state", extra=asdict(outcome))
    count("EventsProcessed")
    if outcome.alerts:
        count("AlertsSent", len(outcome.alerts))
    return asdict(outcome)
