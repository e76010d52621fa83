"""The API's questions about jobs: the list (filtered and sorted on the rollups alone,
one Query, then one Query per job on the page) and a job's timeline."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from shared.domain import accrual as acc
from shared.domain.day_split import job_between
from shared.domain.job import JobCost, JobRecords, _parse, _tags, status_of
from shared.services.deps import LedgerDeps
from shared.services.job_view import active_between, all_rollups, cost_of, load_job


def _total(rollups: list[dict[str, Any]], now: datetime, deps: LedgerDeps) -> Decimal:
    return acc.total(acc.from_attributes(r) for r in rollups).total_usd(now, deps.prices.clock)


def list_jobs(
    deps: LedgerDeps,
    now: datetime,
    *,
    first: date,
    last: date,
    tag_filters: dict[str, str] | None = None,
    status: str | None = None,
    sort: str = "cost",
    offset: int = 0,
    limit: int = 20,
) -> tuple[list[JobCost], int]:
    """The page of jobs active in [first, last] matching the filters, and how many match."""
    filters = dict(tag_filters or {})
    candidates: list[tuple[Any, str, list[dict[str, Any]]]] = []
    for job_id, rollups in all_rollups(deps.rollups).items():
        if not active_between(rollups, first, last, now):
            continue
        tags, _ = _tags(rollups)
        if any(tags.get(k) != v for k, v in filters.items()):
            continue
        a = acc.total(acc.from_attributes(r) for r in rollups)
        if status is not None and status_of(a, rollups, now) != status:
            continue
        if sort == "cost":
            key: Any = (-_total(rollups, now, deps), job_id)
        else:
            starts = [str(r["started_at"]) for r in rollups if r.get("started_at")]
            key = (min(starts) if starts else "~", job_id)
        candidates.append((key, job_id, rollups))
    candidates.sort(key=lambda c: c[0])
    page = []
    for _, job_id, _rollups in candidates[offset : offset + limit]:
        records = load_job(deps.table, deps.rollups, job_id)
        if records is not None:
            page.append(cost_of(deps, records, now))
    return page, len(candidates)


def readable_records(deps: LedgerDeps, job_id: str) -> JobRecords | None:
    return load_job(deps.table, deps.rollups, job_id)


def timeline(
    deps: LedgerDeps, records: JobRecords, start: datetime, now: datetime, points: int
) -> list[tuple[datetime, Decimal]]:
    """Cumulative cost from the job's start to now at evenly spaced moments."""
    from shared.services.job_view import load_sealed

    load_sealed(deps.table, records, start)
    series = []
    for n in range(points):
        at = start + (now - start) * n / (points - 1)
        inside, _ = job_between(records, start - timedelta(seconds=1), at, now, deps.prices.series)
        series.append((at, inside["total"]))
    return series


def started(records: JobRecords) -> datetime | None:
    starts = [str(r["started_at"]) for r in records.rollups if r.get("started_at")]
    return _parse(min(starts)) if starts else None
