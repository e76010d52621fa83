"""Every minute: evaluate budgets (thresholds, forecasts; once a day, anomalies) into the
outbox, then deliver the outbox within what is left of the run's timeout."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from shared.adapters.telemetry import count, seconds
from shared.app.action_runtime import action_deps
from shared.app.event_function import Answer, event_function, logger
from shared.app.functions import BY_NAME
from shared.app.runtime import Runtime
from shared.domain.clock import utc
from shared.events.envelope import ScheduledEvent
from shared.reports.formatting import iso
from shared.services.budget_tick import run_tick

TIMEOUT_SECONDS = BY_NAME["budget_tick"].timeout_seconds


@event_function(ScheduledEvent)
def handler(event: ScheduledEvent, rt: Runtime) -> Answer:
    started = time.monotonic()
    now = utc(event.time)
    config, deps = rt.settings.config, rt.ledger_deps()
    tick = run_tick(
        deps,
        rt.budget_store,
        config,
        rt.notifier,
        now,
        lambda: TIMEOUT_SECONDS - (time.monotonic() - started),
        action_deps(rt),
    )
    if tick.alerts:
        logger.info("budget alerts", extra={"alerts": tick.alerts})
        count("AlertsSent", len(tick.alerts))
    if tick.failed_budgets:
        count("BudgetsNotEvaluated", len(tick.failed_budgets))
    # How late this run started against its schedule (the alerts' latency floor).
    seconds("TickLagSeconds", max(0.0, (datetime.now(UTC) - now).total_seconds()))
    return {
        "alerts": tick.alerts,
        "failed_budgets": tick.failed_budgets,
        "delivered": tick.delivery.sent,
        "pending": tick.delivery.pending,
        "delivery_failed": tick.delivery.failed,
        "quiet_until": iso(tick.quiet_until),
        "quiet_regardless_of_events": tick.quiet_regardless_of_events,
    }
