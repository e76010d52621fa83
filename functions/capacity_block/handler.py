"""Capacity Block Delivered / Expiration Warning -> noted on the block (wiring only)."""

from __future__ import annotations

from shared.adapters.telemetry import count
from shared.app.event_function import Answer, event_function, logger
from shared.app.runtime import Runtime
from shared.events.sagemaker import CAPACITY_BLOCK_EVENT, CapacityBlockEvent
from shared.services.reservation_schedule import note_block_event


@event_function(CAPACITY_BLOCK_EVENT)
def handler(event: CapacityBlockEvent, rt: Runtime) -> Answer:
    reservation_id = event.detail.capacity_reservation_id
    logger.append_keys(reservation_id=reservation_id)
    result = note_block_event(
        rt.ledger_deps(), event.account, event.region, reservation_id, event.kind, event.time
    )
    count("EventsProcessed")
    return {"result": result, "reservation_id": reservation_id, "kind": event.kind}
