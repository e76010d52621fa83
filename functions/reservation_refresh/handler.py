"""Daily: refresh capacity reservations; alert admins of underused ones (wiring only)."""

from __future__ import annotations

from shared.adapters.telemetry import count
from shared.app.event_function import Answer, event_function, logger
from shared.app.runtime import Runtime
from shared.domain.clock import utc
from shared.events.envelope import ScheduledEvent
from shared.services.reservation_schedule import refresh_reservations


@event_function(ScheduledEvent)
def handler(event: ScheduledEvent, rt: Runtime) -> Answer:
    result = refresh_reservations(
        rt.ledger_deps(),
        rt.capacity_reservations(),
        rt.notifier,
        utc(event.time),
        account=event.account,
        region=event.region,
    )
    if result.gone:
        logger.warning("reservations EC2 no longer knows", extra={"gone": result.gone})
    if result.failed:
        logger.warning("reservation refresh failed in", extra={"failed": result.failed})
    if result.alerted:
        count("AlertsSent", len(result.alerted))
    return {
        "refreshed": result.refreshed,
        "gone": result.gone,
        "alerted": result.alerted,
        "failed": result.failed,
    }
