"""The API's list of jobs: filtered and sorted on the rollups alone (one Query), then
one Query per job on the page."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any

from shared.adapters.job_records import load_job
from shared.domain import accrual as acc
from shared.domain.job import JobCost, rollup_tags, status_of
from shared.services.deps import LedgerDeps
from shared.services.job_view import active_between, all_rollups, cost_of


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
        tags, _ = rollup_tags(rollups)
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
