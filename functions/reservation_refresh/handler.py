"""Daily: refresh capacity reservations; alert admins of underused ones (wiring only)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import runtime
from shared.clock import utc
from shared.edge import parse_event
from shared.event_envelope import ScheduledEvent
from shared.services.reservation_schedule import refresh_reservations
from shared.telemetry import count, metrics

logger = Logger(service="costtracker")


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics(raise_on_empty_metrics=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    parsed = parse_event(event, ScheduledEvent, logger)
    result = refresh_reservations(
        runtime.ledger_deps(),
        runtime.capacity_reservations(),
        runtime.notifier(),
        utc(parsed.time),
        account=parsed.account,
        region=parsed.region,
    )
    if result.gone:
        logger.warning("reservations EC2 no longer knows", extra={"gone": result.gone})
    if result.alerted:
        count("AlertsSent", len(result.alerted))
    return {"refreshed": result.refreshed, "gone": result.gone, "alerted": result.alerted}
