"""Daily (configurable UTC time): the previous day's tagged summary, JSON/CSV/FOCUS to S3,
a summary item for the API, and one message to finance."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import runtime, telemetry
from shared.clock import utc
from shared.edge import parse_event
from shared.event_envelope import ScheduledEvent
from shared.services.summaries import publish_summary, summarize_day
from shared.telemetry import metrics, spend

logger = Logger(service="costtracker")


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics(raise_on_empty_metrics=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    parsed = parse_event(event, ScheduledEvent, logger)
    now = utc(parsed.time)
    day = now.date() - timedelta(days=1)
    summaries = runtime.summary_store()
    history = {
        d: Decimal(s["total_usd"])
        for d, s in summaries.get_summaries([day - timedelta(days=n) for n in range(1, 8)]).items()
    }
    deps = runtime.ledger_deps()
    summary, rows = summarize_day(deps, day, now, history)
    summaries.put_summary(day, summary)
    version = runtime.current_settings().config.summary.focus_version
    keys = publish_summary(summary, rows, runtime.report_store(), runtime.notifier(), version)
    logger.info("daily summary", extra={"day": day.isoformat(), "total": summary["total_usd"]})
    for key in ("project", "team"):
        for value, usd in summary["by_tag"].get(key, {}).items():
            spend("DailySpendUSD", Decimal(usd), key, value)
    if telemetry.enabled():  # the admins' CloudWatch dashboard (reads the day again)
        from shared.services import ops_metrics  # only with metrics

        telemetry.day_figures(ops_metrics.day_figures(deps, day, now))
    return {"day": day.isoformat(), "total_usd": summary["total_usd"], "objects": keys}
