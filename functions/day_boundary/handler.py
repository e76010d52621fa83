"""Scheduled at 00:00 UTC: mark jobs that are running active on the new day."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import runtime
from shared.clock import utc
from shared.edge import parse_event
from shared.event_envelope import ScheduledEvent
from shared.services.day_boundary import mark_running_jobs_active
from shared.telemetry import metrics

logger = Logger(service="costtracker")


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics(raise_on_empty_metrics=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    parsed = parse_event(event, ScheduledEvent, logger)
    day = utc(parsed.time).date()
    marked = mark_running_jobs_active(runtime.ledger_deps(), day)
    logger.info("day boundary", extra={"day": day.isoformat(), "jobs_marked": marked})
    return {"day": day.isoformat(), "jobs_marked": marked}
