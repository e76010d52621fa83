"""S3 Object Created / Object Deleted (EventBridge) -> checkpoint records (wiring only)."""

from __future__ import annotations

from dataclasses import asdict

from shared.app.event_function import Answer, event_function, logger
from shared.app.runtime import Runtime
from shared.events.aws import OBJECT_EVENT, ObjectCreatedEvent, ObjectEvent
from shared.services.checkpoints import record_object_event


@event_function(OBJECT_EVENT)
def handler(event: ObjectEvent, rt: Runtime) -> Answer:
    outcome = record_object_event(
        rt.ledger_deps(),
        rt.checkpoint_store,
        event_id=event.id,
        account=event.account,
        at=event.time,
        region=event.region,
        bucket=event.detail.bucket.name,
        raw_key=event.detail.object.key,
        size_bytes=event.detail.object.size if isinstance(event, ObjectCreatedEvent) else None,
        sequencer=event.detail.object.sequencer,
    )
    logger.info("checkpoint object", extra={"result": outcome.result, "key": outcome.key})
    return asdict(outcome)
