"""Daily: DescribeFileSystems in each live file system's own account and region (and the
tracker's), for the changes and deletions no CloudTrail event told of (wiring only).
Each (account, region) is a unit of its own (``FileSystemLedger.refresh_place``); this
one invocation runs them in turn."""

from __future__ import annotations

from shared.app.event_function import Answer, event_function, logger
from shared.app.runtime import Runtime
from shared.domain.clock import utc
from shared.events.envelope import ScheduledEvent
from shared.services.file_systems import FileSystemLedger


@event_function(ScheduledEvent)
def handler(event: ScheduledEvent, rt: Runtime) -> Answer:
    ledger = FileSystemLedger(rt.ledger_deps(), rt.file_system_store)
    result = ledger.refresh(rt.file_systems(), utc(event.time), [(event.account, event.region)])
    if result["failed"]:
        logger.warning("file systems not described", extra={"failed": result["failed"]})
    return result
