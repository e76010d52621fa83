"""Hourly: delete orphan utilization alarms; re-consider auto-stop of idle instances."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import runtime
from shared.edge import parse_event
from shared.event_envelope import ScheduledEvent
from shared.services.utilization import sweep_alarms, sweep_auto_stop
from shared.telemetry import metrics

logger = Logger(service="costtracker")


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics(raise_on_empty_metrics=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    parse_event(event, ScheduledEvent, logger)
    deps = runtime.ledger_deps()
    open_heads = list(deps.instances.open_heads())  # read once for both sweeps
    deleted = sweep_alarms(deps, runtime.alarms(), open_heads)
    auto_stop = sweep_auto_stop(deps, runtime.stopper(), open_heads)
    logger.info("alarm sweep", extra={"orphans_deleted": deleted, "auto_stop": auto_stop})
    return {"orphans_deleted": deleted, "auto_stop": auto_stop}
