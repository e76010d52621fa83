"""Hourly: close segments whose stop event never came, open those of running instances
we never heard of (both marked inferred)."""

from __future__ import annotations

import os
from dataclasses import asdict
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import runtime, telemetry
from shared.edge import parse_event
from shared.event_envelope import ScheduledEvent
from shared.inventory import Ec2Inventory
from shared.services.sweep import sweep_missed_events
from shared.telemetry import accelerator_conditions, metrics

logger = Logger(service="costtracker")


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics(raise_on_empty_metrics=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    parsed = parse_event(event, ScheduledEvent, logger)
    region = parsed.region or os.environ.get("AWS_REGION", "us-east-1")
    deps = runtime.ledger_deps()
    result = sweep_missed_events(deps, Ec2Inventory(runtime.client("ec2")), region)
    # Hourly, for the admins' dashboard: accelerators idle (and the like) right now.
    if telemetry.enabled():
        from shared.services.ops_metrics import accelerators_by_condition  # only with metrics

        accelerator_conditions(accelerators_by_condition(deps.instances.open_heads()))
    if result.closed or result.opened:
        logger.warning("missed events inferred", extra=asdict(result))
    return asdict(result)
