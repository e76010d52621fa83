"""Daily, after the finance day's boundary: the finance day just closed (its calendar:
``finance_timezone``), its tagged summary, JSON/CSV/FOCUS to S3, a summary item for the API,
and one message to finance."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from shared.adapters import telemetry
from shared.adapters.telemetry import spend
from shared.app.event_function import Answer, event_function, logger
from shared.app.runtime import Runtime
from shared.domain.clock import utc
from shared.domain.finance_day import calendar_of
from shared.events.envelope import SummaryTick
from shared.services.alerts import AlertPoster
from shared.services.metric_reads import day_reader
from shared.services.summaries import publish_summary, summarize_day


@event_function(SummaryTick)
def handler(event: SummaryTick, rt: Runtime) -> Answer:
    now = utc(event.time)
    day = calendar_of(rt.settings.config).day_of(now) - timedelta(days=1)
    summaries = rt.summary_store
    history = {
        d: Decimal(s["total_usd"])
        for d, s in summaries.get_summaries([day - timedelta(days=n) for n in range(1, 8)]).items()
    }
    deps = rt.ledger_deps()
    walk = None
    if telemetry.enabled():  # the admins' CloudWatch dashboard, from the same walk
        from shared.services.ops_metrics import DayFiguresWalk  # only with metrics

        walk = DayFiguresWalk(deps, day, now)
    start, end = calendar_of(deps.config).bounds(day)  # the finance day, as the summary's
    # The day's hours of accelerator utilization that no hourly read closed, read first.
    reread = day_reader(deps.config, rt.utilization_store, rt.metric_reader, start, end, now)

    each_job = walk.add if walk is not None else None
    summary, rows = summarize_day(deps, day, now, history, each_job=each_job, each_batch=reread)
    summaries.put_summary(day, summary)
    version = rt.settings.config.summary.focus_version
    poster = AlertPoster(rt.outbox_store, rt.notifier)  # the finance message, via the outbox
    keys = publish_summary(summary, rows, rt.report_store, poster, version, now)
    logger.info("daily summary", extra={"day": day.isoformat(), "total": summary["total_usd"]})
    for key in ("project", "team"):
        for value, usd in summary["by_tag"].get(key, {}).items():
            spend("DailySpendUSD", Decimal(usd), key, value)
    if walk is not None:
        telemetry.day_figures(walk.figures())
    return {"day": day.isoformat(), "total_usd": summary["total_usd"], "objects": keys}
