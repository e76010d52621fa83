"""A crossing timer arrived (SQS, delayed to the second): evaluate its budget now, so a
predicted crossing alerts (and acts) at its moment; a timer whose crossing has moved finds
nothing crossed and does nothing. Wiring only."""

from __future__ import annotations

import time

from shared.adapters.telemetry import count, seconds
from shared.app.action_runtime import action_deps
from shared.app.event_function import Answer, event_function, logger
from shared.app.functions import BY_NAME
from shared.app.runtime import Runtime
from shared.events.timers import TimerEvent
from shared.reports.formatting import iso
from shared.services.budget_tick import run_tick

TIMEOUT_SECONDS = BY_NAME["budget_timer"].timeout_seconds


@event_function(TimerEvent)
def handler(event: TimerEvent, rt: Runtime) -> Answer:
    started = time.monotonic()
    now = rt.clock.now()
    alerts: list[str] = []
    for budget_id, moment in event.budgets():
        # How late the timer arrived against its moment (the alert's latency).
        seconds("TimerLagSeconds", max(0.0, (now - moment).total_seconds()))
        tick = run_tick(
            rt.ledger_deps(),
            rt.budget_store,
            rt.settings.config,
            rt.notifier,
            now,
            lambda: TIMEOUT_SECONDS - (time.monotonic() - started),
            action_deps(rt),
            only=budget_id,
        )
        alerts += tick.alerts
    if alerts:
        logger.info("budget alerts at the crossing", extra={"alerts": alerts})
        count("AlertsSent", len(alerts))
    return {"alerts": alerts, "at": iso(now)}
