"""Hourly at :20: each running instance's last hour of accelerator utilization
(GetMetricData, closed: agent metrics are 15 minutes late at most), kept as hourly
aggregates per instance (cost rule 10)."""

from __future__ import annotations

from datetime import timedelta

from shared.app.event_function import Answer, event_function, logger
from shared.app.runtime import Runtime
from shared.domain.clock import utc
from shared.events.envelope import ScheduledEvent
from shared.reports.formatting import iso
from shared.services.metric_reads import read_last_hour

# Nothing runs: nothing to read until an event starts an instance (any event wakes it).
QUIET = timedelta(days=30)


@event_function(ScheduledEvent)
def handler(event: ScheduledEvent, rt: Runtime) -> Answer:
    now = utc(event.time)
    deps = rt.ledger_deps()
    heads = list(deps.instances.open_heads())
    outcome = read_last_hour(deps.config, rt.utilization_store, rt.metric_reader, heads, now)
    logger.info("metric read", extra={"hours": outcome.hours_read, "failed": outcome.failed})
    answer: dict[str, object] = {
        "hours_read": outcome.hours_read,
        "hours_closed": outcome.hours_closed,
        "failed": outcome.failed,
    }
    if not heads:
        answer["quiet_until"] = iso(now + QUIET)
    return answer
