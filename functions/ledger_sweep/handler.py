"""Hourly: close segments whose stop event never came, open those of running instances
we never heard of (both marked inferred)."""

from __future__ import annotations

import os
from dataclasses import asdict

from shared.adapters import telemetry
from shared.adapters.inventory import Ec2Inventory
from shared.adapters.telemetry import accelerator_conditions
from shared.app.event_function import Answer, event_function, logger
from shared.app.runtime import Runtime
from shared.events.envelope import ScheduledEvent
from shared.services.sweep import sweep_missed_events


@event_function(ScheduledEvent)
def handler(event: ScheduledEvent, rt: Runtime) -> Answer:
    region = event.region or os.environ.get("AWS_REGION", "us-east-1")
    deps = rt.ledger_deps()
    result = sweep_missed_events(deps, Ec2Inventory(rt.client("ec2")), region)
    # Hourly, for the admins' dashboard: accelerators idle (and the like) right now.
    if telemetry.enabled():
        from shared.services.ops_metrics import accelerators_by_condition  # only with metrics

        accelerator_conditions(accelerators_by_condition(deps.instances.open_heads()))
    if result.closed or result.opened:
        logger.warning("missed events inferred", extra=asdict(result))
    return asdict(result)
