"""EC2 running / stopped / terminated -> create or delete the instance's utilization alarms."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import runtime
from shared.edge import parse_event
from shared.events import InstanceStateChangeEvent
from shared.services.utilization import sync_alarms
from shared.telemetry import metrics

logger = Logger(service="costtracker")


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics(raise_on_empty_metrics=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    parsed = parse_event(event, InstanceStateChangeEvent, logger)
    logger.append_keys(event_id=parsed.id, instance_id=parsed.detail.instance_id)
    result = sync_alarms(
        runtime.ledger_deps(),
        runtime.alarms(),
        event_id=parsed.id,
        at=parsed.time,
        instance_id=parsed.detail.instance_id,
        state=parsed.detail.state,
        region=parsed.region,
        account=parsed.account,
    )
    logger.info("alarm lifecycle", extra={"result": result})
    return {"result": result, "instance_id": parsed.detail.instance_id}
