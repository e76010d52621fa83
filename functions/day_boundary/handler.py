"""Scheduled at the finance day's start (00:00 in ``finance_timezone``): mark jobs that are
running active on the new day."""

from __future__ import annotations

from shared.app.event_function import Answer, event_function, logger
from shared.app.runtime import Runtime
from shared.domain.clock import utc
from shared.domain.finance_day import calendar_of
from shared.events.envelope import ScheduledEvent
from shared.services.day_boundary import mark_running_jobs_active


@event_function(ScheduledEvent)
def handler(event: ScheduledEvent, rt: Runtime) -> Answer:
    day = calendar_of(rt.settings.config).day_of(utc(event.time))
    marked = mark_running_jobs_active(rt.ledger_deps(), day)
    logger.info("day boundary", extra={"day": day.isoformat(), "jobs_marked": marked})
    return {"day": day.isoformat(), "jobs_marked": marked}
