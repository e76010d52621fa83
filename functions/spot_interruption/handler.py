"""EC2 Spot Instance Interruption Warning / Rebalance Recommendation -> the instance record."""

from __future__ import annotations

from shared.adapters.telemetry import count
from shared.app.event_function import Answer, event_function, logger
from shared.app.runtime import Runtime
from shared.app.trust_edge import team_bound
from shared.events.aws import SPOT_NOTICE, SpotInterruptionEvent, SpotNotice
from shared.services.instances import record_spot_notice


@event_function(SPOT_NOTICE)
def handler(event: SpotNotice, rt: Runtime) -> Answer:
    warning = isinstance(event, SpotInterruptionEvent)
    action = (
        event.detail.instance_action if isinstance(event, SpotInterruptionEvent) else "rebalance"
    )
    logger.append_keys(instance_id=event.detail.instance_id)
    outcome = record_spot_notice(
        team_bound(rt, rt.ledger_deps()),
        event_id=event.id,
        at=event.time,
        instance_id=event.detail.instance_id,
        action=action,
        region=event.region,
        account=event.account,
    )
    logger.info("spot notice", extra={"result": outcome.result, "action": action})
    if outcome.result == "applied" and warning:
        count("SpotInterruptions")
    return outcome.answer()
