"""S3 Object Created / Object Deleted (EventBridge) -> checkpoint records (wiring only)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import runtime
from shared.edge import parse_event
from shared.events import ObjectCreatedEvent, ObjectDeletedEvent
from shared.services.checkpoints import record_object_event
from shared.telemetry import metrics

logger = Logger(service="costtracker")


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics(raise_on_empty_metrics=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    created = isinstance(event, dict) and event.get("detail-type") == "Object Created"
    if created:
        parsed_created = parse_event(event, ObjectCreatedEvent, logger)
        detail, size = parsed_created.detail, parsed_created.detail.object.size
        parsed: ObjectCreatedEvent | ObjectDeletedEvent = parsed_created
    else:
        parsed_deleted = parse_event(event, ObjectDeletedEvent, logger)
        detail, size = parsed_deleted.detail, None  # type: ignore[assignment]
        parsed = parsed_deleted
    logger.append_keys(event_id=parsed.id)
    outcome = record_object_event(
        runtime.ledger_deps(),
        runtime.checkpoint_store(),
        event_id=parsed.id,
        account=parsed.account,
        at=parsed.time,
        region=parsed.region,
        bucket=detail.bucket.name,
        raw_key=detail.object.key,
        size_bytes=size,
        sequencer=detail.object.sequencer,
    )
    logger.info("checkpoint object", extra={"result": outcome.result, "key": outcome.key})
    return asdict(outcome)
