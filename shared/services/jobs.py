"""Reading job costs: one Query per job, open segments accrued to the clock's now."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime, timedelta

from shared.config import LedgerConfig
from shared.costing import job_cost
from shared.ledger import JobItems, Ledger
from shared.models import JobCost


class JobNotFound(Exception):
    pass


def cost_of_items(items: JobItems, config: LedgerConfig, now: datetime) -> JobCost:
    return job_cost(
        items.job_id,
        items.instances,
        now,
        config.tracking.grouping_tag_keys,
        items.checkpoints,
        config.checkpoint.tokens_per_step_tag,
    )


def get_job_cost(ledger: Ledger, config: LedgerConfig, job_id: str, now: datetime) -> JobCost:
    items = ledger.job_items(job_id)
    if items is None or not items.instances:
        raise JobNotFound(job_id)
    return cost_of_items(items, config, now)


def jobs_active_between(ledger: Ledger, first: date, last: date) -> list[str]:
    """Job ids active on any UTC day in [first, last] (one Query per day), first seen first."""
    found: dict[str, None] = {}
    day = first
    while day <= last:
        for job_id in ledger.jobs_active_on(day):
            found.setdefault(job_id)
        day += timedelta(days=1)
    return list(found)


def list_job_costs(
    ledger: Ledger,
    config: LedgerConfig,
    now: datetime,
    *,
    first: date,
    last: date,
    tag_filters: dict[str, str] | None = None,
    status: str | None = None,
) -> list[JobCost]:
    """Costs of the jobs active in [first, last], filtered by grouping tags and status.

    A filter on an indexed tag (project, team) narrows the candidates with its
    index; the other filters apply to the computed jobs.
    """
    filters = dict(tag_filters or {})
    indexed = [k for k in ("project", "team") if k in filters]
    candidates: Iterable[str]
    if indexed:
        key = indexed[0]
        candidates = ledger.jobs_by_tag(key, filters[key], first, last)
    else:
        candidates = jobs_active_between(ledger, first, last)
    jobs = []
    for job_id in candidates:
        items = ledger.job_items(job_id)
        if items is None or not items.instances:
            continue
        cost = cost_of_items(items, config, now)
        if any(cost.tags.get(k) != v for k, v in filters.items()):
            continue
        if status is not None and cost.status != status:
            continue
        jobs.append(cost)
    return jobs
