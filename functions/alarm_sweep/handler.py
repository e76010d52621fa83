"""Hourly: delete the retired utilization alarms and orphan ones; re-consider auto-stop
of idle instances."""

from __future__ import annotations

from shared.app.event_function import Answer, event_function, logger
from shared.app.runtime import Runtime
from shared.events.envelope import ScheduledEvent
from shared.services.alarm_lifecycle import delete_retired_alarms, sweep_alarms
from shared.services.utilization import sweep_auto_stop


@event_function(ScheduledEvent)
def handler(event: ScheduledEvent, rt: Runtime) -> Answer:
    deps = rt.ledger_deps()
    open_heads = list(deps.instances.open_heads())  # read once for both sweeps
    retired = delete_retired_alarms(deps, rt.alarms)
    deleted = sweep_alarms(deps, rt.alarms, open_heads)
    auto_stop = sweep_auto_stop(deps, rt.stopper, open_heads)
    answer = {"retired_deleted": len(retired), "orphans_deleted": deleted, "auto_stop": auto_stop}
    logger.info("alarm sweep", extra=answer)
    return answer
