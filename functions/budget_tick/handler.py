"""Every minute: evaluate budgets (thresholds, forecasts); once a day, anomalies."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import runtime
from shared.clock import utc
from shared.edge import parse_event
from shared.event_envelope import ScheduledEvent
from shared.formatting import iso
from shared.services.budgets import check_anomalies, evaluate_budgets
from shared.telemetry import count, metrics, seconds

logger = Logger(service="costtracker")


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics(raise_on_empty_metrics=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    parsed = parse_event(event, ScheduledEvent, logger)
    now = utc(parsed.time)
    config = runtime.current_settings().config
    deps = runtime.ledger_deps()
    evaluation = evaluate_budgets(deps, runtime.budget_store(), config, runtime.notifier(), now)
    sent = list(evaluation.sent)
    if now.hour == 0 and now.minute == 0:
        sent += check_anomalies(deps, runtime.budget_store(), config, runtime.notifier(), now)
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
