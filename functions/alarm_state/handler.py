"""CloudWatch Alarm State Change -> utilization condition, team alerts (wiring only)."""

from __future__ import annotations

from dataclasses import asdict

from shared.adapters.telemetry import count
from shared.app.event_function import Answer, event_function, logger
from shared.app.runtime import Runtime
from shared.events.aws import AlarmStateChangeEvent
from shared.services.utilization import record_alarm_change


@event_function(AlarmStateChangeEvent)
def handler(event: AlarmStateChangeEvent, rt: Runtime) -> Answer:
    detail = event.detail
    logger.append_keys(alarm=detail.alarm_name)
    outcome = record_alarm_change(
        rt.ledger_deps(),
        rt.notifier,
        rt.stopper,
        event_id=event.id,
        alarm_name=detail.alarm_name,
        seen=event.identity(),
        state=detail.state.value,
        state_at=detail.state.timestamp,
    )
    answer = asdict(outcome)
    logger.info("alarm state", extra=answer)
    count("EventsProcessed")
    if outcome.alerts:
        count("AlertsSent", len(outcome.alerts))
    return answer
