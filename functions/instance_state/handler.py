"""EC2 Instance State-change Notification -> the job ledger (wiring only)."""

from __future__ import annotations

from shared.adapters.telemetry import count
from shared.app.event_function import Answer, event_function, logger
from shared.app.runtime import Runtime
from shared.app.trust_edge import team_bound
from shared.events.aws import InstanceStateChangeEvent
from shared.services.instances import record_state_change
from shared.services.utilization import alert_on_change


@event_function(InstanceStateChangeEvent)
def handler(event: InstanceStateChangeEvent, rt: Runtime) -> Answer:
    detail = event.detail
    logger.append_keys(instance_id=detail.instance_id)
    deps = team_bound(rt, rt.ledger_deps())
    outcome = record_state_change(
        deps,
        event_id=event.id,
        at=event.time,
        instance_id=detail.instance_id,
        state=detail.state,
        region=event.region,
        account=event.account,
    )
    if outcome.head is not None and outcome.head.alarms:  # alarms that came before this event
        alert_on_change(deps, rt.notifier, outcome.head, event.time)
    logger.info("state change", extra={"result": outcome.result, "state": detail.state})
    count("EventsProcessed")
    if outcome.result == "duplicate":
        count("EventsDuplicate")
    return outcome.answer()
