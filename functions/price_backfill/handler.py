"""Hourly: fill in prices that were unknown, alert admins of prices still missing."""

from __future__ import annotations

from dataclasses import asdict

from shared.app.event_function import Answer, event_function, logger
from shared.app.runtime import Runtime
from shared.events.envelope import ScheduledEvent
from shared.services.price_backfill import backfill_prices


@event_function(ScheduledEvent)
def handler(event: ScheduledEvent, rt: Runtime) -> Answer:
    result = backfill_prices(rt.ledger_deps(), rt.notifier, rt.checkpoint_store)
    logger.info("price backfill", extra=asdict(result))
    return asdict(result)
