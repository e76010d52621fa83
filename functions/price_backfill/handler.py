"""Hourly: fill in prices that were unknown, alert admins of prices still missing."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import runtime
from shared.edge import parse_event
from shared.event_envelope import ScheduledEvent
from shared.services.price_backfill import backfill_prices
from shared.telemetry import metrics

logger = Logger(service="costtracker")


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics(raise_on_empty_metrics=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    parse_event(event, ScheduledEvent, logger)
    result = backfill_prices(runtime.ledger_deps(), runtime.notifier())
    logger.info("price backfill", extra=asdict(result))
    return asdict(result)
