"""Daily tagged summaries and the FOCUS export: one push a day for finance.

A day's figures are the jobs' costs inside that UTC day, split at midnight to the
second (a segment's billing minimum falls on the day it closed), so the days add
up to the jobs' totals. Re-running a day overwrites the same outputs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from shared.config import LedgerConfig
from shared.costing import job_day_breakdown, job_tags
from shared.csv_safe import write_csv
from shared.focus import FOCUS_METADATA, focus_rows, to_csv, to_parquet
from shared.ledger import JobItems, Ledger
from shared.notify import Alert, Notifier
from shared.reports import ReportStore
from shared.views import cents, iso, money

KINDS = ("instance", "ebs", "checkpoint_storage", "wasted_rerun", "wasted_idle")


def day_bounds(day: date) -> tuple[datetime, datetime]:
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    return start, start + timedelta(days=1)


def summarize_day(
    ledger: Ledger,
    config: LedgerConfig,
    day: date,
    now: datetime,
    previous_totals: dict[date, Decimal] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The summary of one UTC day and its FOCUS rows, as the ledger knows them at ``now``."""
    start, end = day_bounds(day)
    grouping = config.tracking.grouping_tag_keys
    by_job: dict[str, Decimal] = {}
    by_tag: dict[str, dict[str, Decimal]] = {}
    sums = dict.fromkeys(KINDS, Decimal(0))
    untagged = missing_grouping = Decimal(0)
    untagged_instances: list[str] = []
    compliance: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    for job_id in sorted(ledger.jobs_active_on(day)):
        items: JobItems | None = ledger.job_items(job_id)
        if items is None or not items.instances:
            continue
        breakdown = job_day_breakdown(items.instances, items.checkpoints, start, end, now)
        total = breakdown["total"]
        for kind in KINDS:
            sums[kind] += breakdown[kind]
        by_job[job_id] = total
        tags, _ = job_tags(items.instances, grouping)
        for key, value in tags.items():
            bucket = by_tag.setdefault(key, {})
            bucket[value] = bucket.get(value, Decimal(0)) + total
        if job_id.startswith("untagged:"):
            untagged += total
            untagged_instances += [r.instance_id for r in items.instances]
        elif not tags:
            missing_grouping += total
        for record in items.instances:
            missing = [k for k in config.summary.required_tags if k not in record.profile.tags]
            if missing:
                compliance.append(
                    {"instance_id": record.instance_id, "job_id": job_id, "missing": missing}
                )
        account = next((r.profile.account for r in items.instances if r.profile.account), "")
        rows += focus_rows(
            job_id, items.instances, items.checkpoints, start, now, account or "unknown"
        )
    total = sum(by_job.values(), Decimal(0))
    history = previous_totals or {}
    yesterday = history.get(day - timedelta(days=1))
    week = [history[d] for d in (day - timedelta(days=n) for n in range(1, 8)) if d in history]
    summary: dict[str, Any] = {
        "date": day.isoformat(),
        "total_usd": money(total),
        "by_tag": {
            k: {v: money(x) for v, x in sorted(vals.items())} for k, vals in sorted(by_tag.items())
        },
        "untagged_usd": money(untagged),
        "missing_grouping_tags_usd": money(missing_grouping),
        **{f"{kind}_usd": money(value) for kind, value in sums.items()},
        "by_job": {job: money(value) for job, value in sorted(by_job.items())},
        "top_jobs": [
            {"job_id": job, "total_usd": money(value)}
            for job, value in sorted(by_job.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
        ],
        "untagged_instances": sorted(untagged_instances),
        "tag_compliance": compliance,
        "change_vs_previous_day_usd": money(total - yesterday) if yesterday is not None else None,
        "trailing_7d_mean_usd": money(sum(week, Decimal(0)) / len(week)) if week else None,
        "estimated": True,
        "as_of": iso(now),
    }
    return summary, rows


def summaries_between(
    ledger: Ledger, config: LedgerConfig, first: date, last: date, now: datetime
) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Summaries of consecutive days, each compared with the days before it."""
    totals: dict[date, Decimal] = {}
    out = []
    for n in range((last - first).days + 1):
        day = first + timedelta(days=n)
        summary, rows = summarize_day(ledger, config, day, now, totals)
        totals[day] = Decimal(summary["total_usd"])
        out.append((summary, rows))
    return out


def summary_csv(summary: dict[str, Any]) -> str:
    """The day's totals for spreadsheets; tag values and job ids are neutralised against
    formula injection (they come from whoever tags an instance)."""
    day = summary["date"]
    rows: list[list[str | None]] = [[day, "total", None, summary["total_usd"]]]
    for key, values in summary["by_tag"].items():
        for value, usd in values.items():
            rows.append([day, f"tag:{key}", value, usd])
    for job, usd in summary["by_job"].items():
        rows.append([day, "job", job, usd])
    rows.append([day, "untagged", None, summary["untagged_usd"]])
    return write_csv(["date", "group", "value", "usd"], rows)


def publish_summary(
    summary: dict[str, Any],
    rows: Sequence[dict[str, Any]],
    store: ReportStore,
    notifier: Notifier | None,
) -> list[str]:
    """Write the day's JSON, CSV and FOCUS files (same keys on a re-run) and tell finance.

    The FOCUS rows go out twice: Parquet (typed, for FinOps tools) and CSV (spreadsheets)."""
    day = date.fromisoformat(summary["date"])
    prefix = f"{day:%Y/%m/%d}"
    keys: dict[str, tuple[str | bytes, str]] = {
        f"summaries/{prefix}/summary.json": (json.dumps(summary, indent=2), "application/json"),
        f"summaries/{prefix}/summary.csv": (summary_csv(summary), "text/csv"),
        f"focus/{prefix}/focus-1.2.parquet": (to_parquet(rows), "application/vnd.apache.parquet"),
        f"focus/{prefix}/focus-1.2.csv": (to_csv(rows), "text/csv"),
        f"focus/{prefix}/focus-1.2.metadata.json": (
            json.dumps(FOCUS_METADATA, indent=2),
            "application/json",
        ),
    }
    for key, (body, content_type) in keys.items():
        store.put(key, body, content_type)
    if notifier is not None:
        notifier.send(summary_alert(summary))
    return sorted(keys)


def summary_alert(summary: dict[str, Any]) -> Alert:
    total = Decimal(summary["total_usd"])
    lines = [f"Estimated ML training spend on {summary['date']} (UTC): {cents(total)}"]
    if summary["change_vs_previous_day_usd"] is not None:
        lines.append(
            f"Change vs the day before: {cents(Decimal(summary['change_vs_previous_day_usd']))}"
        )
    if summary["trailing_7d_mean_usd"] is not None:
        lines.append(f"Trailing 7-day mean: {cents(Decimal(summary['trailing_7d_mean_usd']))}")
    for key, values in summary["by_tag"].items():
        lines.append(
            f"By {key}: " + ", ".join(f"{v} {cents(Decimal(x))}" for v, x in values.items())
        )
    lines.append(
        f"Untagged: {cents(Decimal(summary['untagged_usd']))}"
        + (
            f" (instances to tag: {', '.join(summary['untagged_instances'])})"
            if summary["untagged_instances"]
            else ""
        )
    )
    lines.append(
        f"Wasted: rerun {cents(Decimal(summary['wasted_rerun_usd']))}, idle "
        f"{cents(Decimal(summary['wasted_idle_usd']))}; checkpoint storage "
        f"{cents(Decimal(summary['checkpoint_storage_usd']))}"
    )
    lines.append(
        "Top jobs: "
        + ", ".join(f"{j['job_id']} {cents(Decimal(j['total_usd']))}" for j in summary["top_jobs"])
    )
    if summary["tag_compliance"]:
        lines.append(f"{len(summary['tag_compliance'])} instance(s) miss required tags.")
    lines.append("Estimates from live events; reconciled with the bill once it is final.")
    return Alert(
        "finance",
        "daily_summary",
        f"ML training spend {summary['date']}: {cents(total)}",
        "\n".join(lines),
        {"severity": "info", "date": summary["date"], "at": summary.get("as_of") or ""},
    )
