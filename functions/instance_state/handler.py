"""EC2 Instance State-change Notification -> the job ledger (wiring only)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import runtime
from shared.edge import parse_event
from shared.events import InstanceStateChangeEvent
from shared.services.instances import record_state_change
from shared.services.utilization import alert_on_change
from shared.telemetry import count, metrics

logger = Logger(service="costtracker")


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics(raise_on_empty_metrics=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    parsed = parse_event(event, InstanceStateChangeEvent, logger)
    logger.append_keys(event_id=parsed.id, instance_id=parsed.detail.instance_id)
    deps = runtime.ledger_deps()
    outcome = record_state_change(
        deps,
        event_id=parsed.id,
        at=parsed.time,
        instance_id=parsed.detail.instance_id,
        state=parsed.detail.state,
        region=parsed.region,
        account=parsed.account,
    )
    if outcome.head is not None and outcome.head.alarms:  # alarms that came before this event
        alert_on_change(deps, runtime.notifier(), outcome.head, parsed.time)
    logger.info("state change", extra={"result": outcome.result, "state": parsed.detail.state})
    count("EventsProcessed")
    if outcome.result == "duplicate":
        count("EventsDuplicate")
    return outcome.answer()
