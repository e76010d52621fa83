"""Capacity Block Delivered / Expiration Warning -> noted on the block (wiring only)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import runtime
from shared.edge import parse_event
from shared.sagemaker_events import CapacityBlockEvent
from shared.services.reservation_schedule import note_block_event
from shared.telemetry import count, metrics

logger = Logger(service="costtracker")


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics(raise_on_empty_metrics=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    parsed = parse_event(event, CapacityBlockEvent, logger)
    reservation_id = parsed.detail.capacity_reservation_id
    logger.append_keys(event_id=parsed.id, reservation_id=reservation_id)
    result = note_block_event(
        runtime.ledger_deps(),
        parsed.account,
        parsed.region,
        reservation_id,
        parsed.kind,
        parsed.time,
    )
    count("EventsProcessed")
    return {"result": result, "reservation_id": reservation_id, "kind": parsed.kind}
