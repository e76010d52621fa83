"""EC2 running / stopped / terminated -> create or delete the instance's utilization alarms."""

from __future__ import annotations

from shared.app.event_function import Answer, event_function, logger
from shared.app.runtime import Runtime
from shared.events.aws import InstanceStateChangeEvent
from shared.services.alarm_lifecycle import sync_alarms


@event_function(InstanceStateChangeEvent)
def handler(event: InstanceStateChangeEvent, rt: Runtime) -> Answer:
    instance_id = event.detail.instance_id
    logger.append_keys(instance_id=instance_id)
    result = sync_alarms(
        rt.ledger_deps(),
        rt.alarms,
        event_id=event.id,
        at=event.time,
        instance_id=instance_id,
        state=event.detail.state,
        region=event.region,
        account=event.account,
    )
    logger.info("alarm lifecycle", extra={"result": result})
    return {"result": result, "instance_id": instance_id}
