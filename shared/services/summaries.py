"""Daily tagged summaries and the FOCUS export: one push a day for finance.

A day's figures are the jobs' costs inside that finance day (the calendar day of the
configured ``finance_timezone``, UTC by default, as its UTC bounds: 23, 24 or 25 hours),
split at its bounds to the second (a segment's billing minimum falls on the day it
closed), so the days add up to the jobs' totals. Re-running a day overwrites the same
outputs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from datetime import date, datetime, timedelta
from decimal import Decimal
from itertools import islice
from typing import Any

from shared.adapters.notify import Alert
from shared.adapters.report_store import ReportStore
from shared.adapters.utilization_store import UtilizationStore
from shared.domain.day_split import KINDS, job_between
from shared.domain.finance_day import calendar_of
from shared.domain.job import JobRecords, rollup_tags
from shared.domain.limits import DOCUMENT_ENTRIES, TOP_ITEMS
from shared.domain.tags import NO_TAG
from shared.reports.csv_safe import write_csv
from shared.reports.focus import FOCUS_METADATA, focus_files
from shared.reports.focus13 import FOCUS_METADATA_13, allocated_rows, focus_files_13
from shared.reports.focus_charges import focus_rows
from shared.reports.formatting import cents, iso, money
from shared.services.alerts import AlertPoster
from shared.services.deps import LedgerDeps
from shared.services.job_view import all_rollups, records_active_on
from shared.services.metric_reads import DayMeasurement

JOBS_PER_BATCH = 100  # jobs held at once by the walk when a batch reader is given


def _after_each_batch(
    active: Iterator[tuple[str, JobRecords]],
    each_batch: Callable[[Sequence[JobRecords]], None] | None,
) -> Iterator[tuple[str, JobRecords]]:
    """``active`` as it comes, each batch handed to ``each_batch`` before its jobs."""
    if each_batch is None:
        yield from active
        return
    while batch := list(islice(active, JOBS_PER_BATCH)):
        each_batch([records for _, records in batch])
        yield from batch


def summarize_day(
    deps: LedgerDeps,
    day: date,
    now: datetime,
    previous_totals: dict[date, Decimal] | None = None,
    rollups: dict[str, list[dict[str, Any]]] | None = None,
    each_job: Callable[[JobRecords], None] | None = None,
    each_batch: Callable[[Sequence[JobRecords]], None] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The summary of one finance day and its FOCUS rows, as the ledger knows them at
    ``now``; ``each_job`` sees every active job's records on the way (the day's other
    figures), ``each_batch`` each batch of up to ``JOBS_PER_BATCH`` of them before
    their figures are made (the day's last hours of utilization, read for the batch)."""
    config = deps.config
    start, end = calendar_of(config).bounds(day)
    by_job: dict[str, Decimal] = {}
    by_tag: dict[str, dict[str, Decimal]] = {}
    sums = dict.fromkeys(KINDS, Decimal(0))
    untagged = missing_grouping = Decimal(0)
    fsx: Decimal | None = None
    untagged_instances: list[str] = []
    compliance: list[dict[str, Any]] = []
    incomplete: list[str] = []
    rows: list[dict[str, Any]] = []
    jobs = rollups if rollups is not None else all_rollups(deps.rollups)
    required = set(config.summary.required_tags)
    measured = DayMeasurement(config, UtilizationStore(deps.table), start, end)
    active = records_active_on(deps, day, start, now, jobs)
    for job_id, records in _after_each_batch(active, each_batch):
        if each_job is not None:
            each_job(records)
        measured.add(records, now)  # after ``each_batch``: it may read the day's last hours
        breakdown, priced = job_between(records, start, end, now, deps.prices.series)
        total = breakdown["total"]
        if not total and priced:
            continue
        for kind in KINDS:
            sums[kind] += breakdown[kind]
        if "fsx" in breakdown:  # a job with FSx for Lustre file systems
            fsx = (fsx or Decimal(0)) + breakdown["fsx"]
        by_job[job_id] = total
        if not priced:
            incomplete.append(job_id)
        tags, _ = rollup_tags(records.rollups)
        for key, value in tags.items():
            bucket = by_tag.setdefault(key, {})
            bucket[value] = bucket.get(value, Decimal(0)) + total
        if job_id.startswith("untagged:"):
            untagged += total
            untagged_instances += [h.instance_id for h in records.heads]
        elif not tags:
            missing_grouping += total
        rows += focus_rows(records, start, now, deps.prices.series, end)
        # An instance lacking a required key, or a key its job has (it has no say in it).
        expected = [*config.summary.required_tags, *(k for k in tags if k not in required)]
        for head in records.heads:
            missing = [k for k in expected if k not in head.profile.tags]
            if missing:
                compliance.append(
                    {"instance_id": head.instance_id, "job_id": job_id, "missing": missing}
                )
    total = sum(by_job.values(), Decimal(0))
    history = previous_totals or {}
    yesterday = history.get(day - timedelta(days=1))
    # The mean over the days before that there are (at most 7), with their number: a
    # second day's "mean" is of one day, and says so.
    week = [history[d] for d in (day - timedelta(days=n) for n in range(1, 8)) if d in history]
    summary: dict[str, Any] = {
        "date": day.isoformat(),
        "start": iso(start),
        "end": iso(end),
        "timezone": config.finance_timezone,
        "total_usd": money(total),
        "by_tag": {k: tag_breakdown(vals, total) for k, vals in sorted(by_tag.items())},
        "untagged_usd": money(untagged),
        "complete": not incomplete,
        "incomplete_jobs": incomplete[:DOCUMENT_ENTRIES],
        "missing_grouping_tags_usd": money(missing_grouping),
        **{f"{kind}_usd": money(value) for kind, value in sums.items()},
        **measured.view(),
        **({"fsx_usd": money(fsx)} if fsx is not None else {}),
        "by_job": _largest_sums(by_job),
        "top_jobs": [
            {"job_id": job, "total_usd": money(value)}
            for job, value in sorted(by_job.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
        ],
        "untagged_instances": sorted(untagged_instances)[:DOCUMENT_ENTRIES],
        "tag_compliance": compliance[:DOCUMENT_ENTRIES],
        "change_vs_previous_day_usd": money(total - yesterday) if yesterday is not None else None,
        "trailing_mean_usd": money(sum(week, Decimal(0)) / len(week)) if week else None,
        "trailing_mean_days": len(week),
        "estimated": True,
        "as_of": iso(now),
        # Finance hears from the first day with spend on (no empty mail before).
        "spend_started": any(
            str(r.get("first_event_at", "9999")) < end.isoformat()
            for items in jobs.values()
            for r in items
        ),
    }
    # How many entries each list or map had before the cap (DOCUMENT_ENTRIES), for
    # those that had more; the FOCUS files in S3 have every row.
    counts = {
        name: n
        for name, n in (
            ("incomplete_jobs", len(incomplete)),
            ("by_job", len(by_job)),
            ("untagged_instances", len(untagged_instances)),
            ("tag_compliance", len(compliance)),
            *((f"by_tag.{k}", len(v)) for k, v in sorted(by_tag.items())),
        )
        if n > DOCUMENT_ENTRIES
    }
    if counts:
        summary["counts"] = counts
    return summary, rows


def tag_breakdown(values: dict[str, Decimal], total: Decimal) -> dict[str, str]:
    """One key's spend by value (capped as ``_largest_sums``), and ``(none)``: the day's
    spend of jobs without the key, so that the breakdown adds up to the day's total."""
    without = total - sum(values.values(), Decimal(0))
    spend = {**values, NO_TAG: values.get(NO_TAG, Decimal(0)) + without}
    named = _largest_sums({v: x for v, x in spend.items() if v != NO_TAG})
    return {**named, NO_TAG: money(spend[NO_TAG])}


OTHERS = "(others)"


def _largest_sums(values: dict[str, Decimal]) -> dict[str, str]:
    """Every entry in name order, or past ``DOCUMENT_ENTRIES`` the largest ones and
    their rest as ``(others)``, so that the map still adds up to the total."""
    if len(values) <= DOCUMENT_ENTRIES:
        return {k: money(v) for k, v in sorted(values.items())}
    ranked = sorted(values.items(), key=lambda kv: (-kv[1], kv[0]))
    kept = dict(sorted(ranked[: DOCUMENT_ENTRIES - 1]))
    rest = sum((v for _, v in ranked[DOCUMENT_ENTRIES - 1 :]), Decimal(0))
    return {**{k: money(v) for k, v in kept.items()}, OTHERS: money(rest)}


def summaries_between(
    deps: LedgerDeps, first: date, last: date, now: datetime
) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Summaries of consecutive days, each compared with the days before it."""
    totals: dict[date, Decimal] = {}
    out = []
    rollups = all_rollups(deps.rollups)
    for n in range((last - first).days + 1):
        day = first + timedelta(days=n)
        summary, rows = summarize_day(deps, day, now, totals, rollups)
        totals[day] = Decimal(summary["total_usd"])
        out.append((summary, rows))
    return out


def summary_csv(summary: dict[str, Any]) -> str:
    """The day's totals for spreadsheets; tag values and job ids are neutralised against
    formula injection (they come from whoever tags an instance)."""
    day = summary["date"]
    # Every figure is an estimate until the day is reconciled with the bill (rule 9).
    basis = "estimated" if summary.get("estimated", True) else "confirmed"
    rows: list[list[str | None]] = [[day, "total", None, summary["total_usd"], basis]]
    for key, values in summary["by_tag"].items():
        for value, usd in values.items():
            rows.append([day, f"tag:{key}", value, usd, basis])
    for job, usd in summary["by_job"].items():
        rows.append([day, "job", job, usd, basis])
    rows.append([day, "untagged", None, summary["untagged_usd"], basis])
    return write_csv(["date", "group", "value", "usd", "basis"], rows)


NO_CHARGES_NOTE = "No charges on this day: no data file was written for it."


def publish_summary(
    summary: dict[str, Any],
    rows: Sequence[dict[str, Any]],
    store: ReportStore,
    poster: AlertPoster | None,
    focus_version: str = "1.2",
    now: datetime | None = None,
) -> list[str]:
    """Write the day's JSON, CSV and FOCUS files (same keys on a re-run) and tell finance
    through the outbox (``daily_summary:<date>``: recorded, then sent; a failed publish
    is re-sent by the budget tick's re-send path).

    The FOCUS rows go out twice: Parquet (typed, for FinOps tools) and CSV (spreadsheets);
    ``focus_version`` "1.3" adds the allocation columns (``shared.reports.focus13``)."""
    day = date.fromisoformat(summary["date"])
    prefix = f"{day:%Y/%m/%d}"
    focus: tuple[bytes, str, dict[str, Any]]
    if focus_version == "1.3":
        focus = (*focus_files_13(allocated_rows(rows)), FOCUS_METADATA_13)
    else:
        focus = (*focus_files(rows), FOCUS_METADATA)
    name = f"focus/{prefix}/focus-{focus_version}"
    keys: dict[str, tuple[str | bytes, str]] = {
        f"summaries/{prefix}/summary.json": (json.dumps(summary, indent=2), "application/json"),
        f"summaries/{prefix}/summary.csv": (summary_csv(summary), "text/csv"),
    }
    if rows:
        keys[f"{name}.parquet"] = (focus[0], "application/vnd.apache.parquet")
        keys[f"{name}.csv"] = (focus[1], "text/csv")
        metadata: dict[str, Any] = dict(focus[2])
    else:
        # A day without charges gets its metadata file only: FOCUS's value rules
        # ("one of the allowed values") judge an empty column as failed.
        metadata = {**focus[2], "Rows": 0, "Notes": f"{focus[2]['Notes']} {NO_CHARGES_NOTE}"}
    keys[f"{name}.metadata.json"] = (json.dumps(metadata, indent=2), "application/json")
    for key, (body, content_type) in keys.items():
        store.put(key, body, content_type)
    if poster is not None and summary.get("spend_started", True):
        at = now or datetime.fromisoformat(str(summary["as_of"]).replace("Z", "+00:00"))
        poster.post(summary_alert(summary), at)
    return sorted(keys)


def summary_alert(summary: dict[str, Any]) -> Alert:
    total = Decimal(summary["total_usd"])
    complete = summary.get("complete", True)
    figure = cents(total) if complete else f"at least {cents(total)}"
    attributes = {"severity": "info", "date": summary["date"]}
    alert_id = f"daily_summary:{summary['date']}"
    zone = summary.get("timezone") or "UTC"  # the finance day's calendar
    if not summary["by_job"] and complete:
        line = f"No ML training spend recorded on {summary['date']} ({zone})."
        return Alert(
            "finance", "daily_summary", line, line, attributes, alert_id, summary.get("as_of") or ""
        )
    lines = [f"Estimated ML training spend on {summary['date']} ({zone}): {figure}"]
    counts: dict[str, int] = summary.get("counts", {})
    rest = f"GET /summaries/{summary['date']}"
    if not complete:
        lines.append(
            "Incomplete: some time has no price yet ("
            + _first_names(summary.get("incomplete_jobs", []), counts.get("incomplete_jobs"), rest)
            + "); the figure is a lower bound until the price is known."
        )
    if summary["change_vs_previous_day_usd"] is not None:
        lines.append(
            f"Change vs the day before: {_signed(Decimal(summary['change_vs_previous_day_usd']))}"
        )
    if summary.get("trailing_mean_usd") is not None:
        days = summary["trailing_mean_days"]
        lines.append(
            f"Daily mean of the previous {days} day{'' if days == 1 else 's'}: "
            f"{cents(Decimal(summary['trailing_mean_usd']))}"
        )
    for key, values in summary["by_tag"].items():
        # Spend without the key is always named, last (0 too: it says every job has it).
        named = {v: x for v, x in values.items() if v != NO_TAG}
        line = _largest_values(named, counts.get(f"by_tag.{key}"), rest)
        lines.append(f"By {key}: {line + ', ' if line else ''}{NO_TAG} {_none_usd(values)}")
    untagged = summary["untagged_instances"]
    lines.append(
        f"Untagged: {cents(Decimal(summary['untagged_usd']))}"
        + (
            f" (instances to tag: {_first_names(untagged, counts.get('untagged_instances'), rest)})"
            if untagged
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
        to_tag = [
            f"{c['instance_id']} ({', '.join(c['missing'])})" for c in summary["tag_compliance"]
        ]
        lines.append(
            "Instances missing required tags: "
            + _first_names(to_tag, counts.get("tag_compliance"), rest)
        )
    lines.append("Estimates from live events; reconciled with the bill once it is final.")
    return Alert(
        "finance",
        "daily_summary",
        f"ML training spend {summary['date']}: {figure}",
        "\n".join(lines),
        attributes,
        alert_id,
        summary.get("as_of") or "",
    )


def _signed(value: Decimal) -> str:
    """+$430.72 / -$1,562.50 (never "$-1,562.50")."""
    return ("-" if value < 0 else "+") + cents(abs(value))


def _none_usd(values: dict[str, str]) -> str:
    return cents(Decimal(values.get(NO_TAG, "0")))


def _first_names(names: Sequence[str], count: int | None, where: str) -> str:
    """The first ``TOP_ITEMS`` names, then how many more (``count``: all there were)."""
    more = (count if count is not None else len(names)) - TOP_ITEMS
    shown = ", ".join(names[:TOP_ITEMS])
    return f"{shown} and {more} more ({where})" if more > 0 else shown


def _largest_values(values: dict[str, str], count: int | None, where: str) -> str:
    """A tag key's values: all of them in name order, or past ``TOP_ITEMS`` the largest
    ones (in name order) and "and N more, $X"."""
    if len(values) <= TOP_ITEMS:
        return ", ".join(f"{v} {cents(Decimal(x))}" for v, x in values.items())
    ranked = sorted(values.items(), key=lambda kv: (-Decimal(kv[1]), kv[0]))
    shown = sorted(ranked[:TOP_ITEMS])
    rest = sum((Decimal(x) for _, x in ranked[TOP_ITEMS:]), Decimal(0))
    more = (count if count is not None else len(values)) - TOP_ITEMS
    return (
        ", ".join(f"{v} {cents(Decimal(x))}" for v, x in shown)
        + f" and {more} more, {cents(rest)} ({where})"
    )
