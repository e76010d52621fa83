"""Hourly: the sweep for missed events. With the work queue (deployed): one unit per
admitted account x configured region goes on it for the worker (``sweep_worker``);
without (a single account, locally): the tracker's own account and region, here."""

from __future__ import annotations

import os
from dataclasses import asdict

from shared.adapters import telemetry
from shared.adapters.inventory import Ec2Inventory
from shared.adapters.telemetry import accelerator_conditions
from shared.adapters.work_queue import SqsWorkQueue
from shared.app.event_function import Answer, event_function, logger
from shared.app.runtime import Runtime
from shared.app.trust_edge import trust_of
from shared.events.envelope import ScheduledEvent
from shared.services.sweep import sweep_missed_events
from shared.services.sweep_fanout import start_sweep


@event_function(ScheduledEvent)
def handler(event: ScheduledEvent, rt: Runtime) -> Answer:
    region = event.region or os.environ.get("AWS_REGION", "us-east-1")
    deps = rt.ledger_deps()
    # Hourly, for the admins' dashboard: accelerators idle (and the like) right now.
    if telemetry.enabled():
        from shared.services.ops_metrics import accelerators_by_condition  # only with metrics

        accelerator_conditions(accelerators_by_condition(deps.instances.open_heads()))
    queue_url = os.environ.get("SWEEP_QUEUE_URL")
    if queue_url:
        accounts = rt.settings.config.accounts
        queue = SqsWorkQueue(rt.client("sqs"), queue_url)
        regions = accounts.regions or (region,)
        return start_sweep(trust_of(rt), queue, regions, accounts.sweep_page_size, event.id)
    result = sweep_missed_events(deps, Ec2Inventory(rt.accounts), region)
    if result.closed or result.opened:
        logger.warning("missed events inferred", extra=asdict(result))
    return asdict(result)
