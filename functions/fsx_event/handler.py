"""FSx for Lustre CreateFileSystem / UpdateFileSystem / DeleteFileSystem calls (CloudTrail
via EventBridge) -> the job ledger (wiring only)."""

from __future__ import annotations

from shared.adapters.telemetry import count
from shared.app.event_function import Answer, event_function, logger
from shared.app.runtime import Runtime
from shared.events.fsx import FsxApiCallEvent
from shared.services.file_systems import FileSystemLedger


@event_function(FsxApiCallEvent)
def handler(event: FsxApiCallEvent, rt: Runtime) -> Answer:
    outcome = FileSystemLedger(rt.ledger_deps(), rt.file_system_store).record_event(event)
    logger.info("fsx api call", extra={"call": event.detail.event_name, **outcome.answer()})
    count("EventsProcessed")
    return outcome.answer()
