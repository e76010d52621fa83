"""Every minute: evaluate budgets (thresholds, forecasts); once a day, anomalies."""

from __future__ import annotations

from datetime import UTC, datetime

from shared.adapters.telemetry import count, seconds
from shared.app.event_function import Answer, event_function, logger
from shared.app.runtime import Runtime
from shared.domain.clock import utc
from shared.events.envelope import ScheduledEvent
from shared.reports.formatting import iso
from shared.services.budget_anomalies import check_anomalies
from shared.services.budgets import evaluate_budgets


@event_function(ScheduledEvent)
def handler(event: ScheduledEvent, rt: Runtime) -> Answer:
    now = utc(event.time)
    config, deps = rt.settings.config, rt.ledger_deps()
    evaluation = evaluate_budgets(deps, rt.budget_store, config, rt.notifier, now)
    sent = list(evaluation.sent)
    if now.hour == 0 and now.minute == 0:
        sent += check_anomalies(deps, rt.budget_store, config, rt.notifier, now)
    if sent:
        logger.info("budget alerts", extra={"alerts": sent})
        count("AlertsSent", len(sent))
    # How late this run started against its schedule (the alerts' latency floor).
    seconds("TickLagSeconds", max(0.0, (datetime.now(UTC) - now).total_seconds()))
    return {
        "alerts": sent,
        "quiet_until": iso(evaluation.quiet_until),
        "quiet_regardless_of_events": evaluation.quiet_regardless_of_events,
    }
