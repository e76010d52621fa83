"""S3 Object Created / Object Deleted (EventBridge) -> checkpoint records (wiring only)."""

from __future__ import annotations

from datetime import datetime

from shared.app.action_runtime import action_deps
from shared.app.event_function import Answer, event_function, logger
from shared.app.runtime import Runtime
from shared.events.aws import OBJECT_EVENT, ObjectCreatedEvent, ObjectEvent
from shared.services.checkpoints import record_object_event
from shared.services.crossing_timers import wake_waiting_stops


@event_function(OBJECT_EVENT)
def handler(event: ObjectEvent, rt: Runtime) -> Answer:
    def wake(job_id: str, complete_at: datetime) -> None:
        """A stop waiting for this checkpoint acts at its moment (budget actions on)."""
        wake_waiting_stops(action_deps(rt), job_id, complete_at, rt.clock.now())

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
        on_complete=wake if rt.settings.config.budget_actions.enabled else None,
    )
    logger.info("checkpoint object", extra={"result": outcome.result, "key": outcome.key})
    return outcome.answer()
