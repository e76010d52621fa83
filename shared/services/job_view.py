"""Reading jobs: one job's records (two Queries: its rollups, its partition:
``shared.adapters.job_records``) and the list of all jobs (one Query of the rollups,
however many days or jobs)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from shared.adapters.job_records import load_job
from shared.adapters.rollup_store import RollupStore
from shared.domain.finance_day import UTC_CALENDAR, FinanceCalendar, calendar_of
from shared.domain.job import JobCost, JobRecords, parse_time
from shared.domain.job_cost import job_cost

if TYPE_CHECKING:
    from shared.services.deps import LedgerDeps


class JobNotFound(Exception):
    pass


def all_rollups(rollups: RollupStore) -> dict[str, list[dict[str, Any]]]:
    """Every job's rollups (one Query), by job."""
    jobs: dict[str, list[dict[str, Any]]] = {}
    for item in rollups.all():
        jobs.setdefault(str(item["job_id"]), []).append(item)
    return jobs


def active_between(
    rollups: Iterable[dict[str, Any]],
    first: date,
    last: date,
    now: datetime,
    calendar: FinanceCalendar = UTC_CALENDAR,
) -> bool:
    """Whether a job (its rollups) accrued anything between two days of ``calendar``."""
    from shared.domain import accrual as acc

    starts = [str(r.get("first_event_at", "")) for r in rollups if r.get("first_event_at")]
    if not starts:
        return False
    begin = parse_time(min(starts))
    assert begin is not None
    accrual = acc.total(acc.from_attributes(r) for r in rollups)
    ends = [str(r.get("last_event_at", "")) for r in rollups if r.get("last_event_at")]
    end = now if accrual.is_open() else (parse_time(max(ends)) or begin)
    return calendar.day_of(begin) <= last and calendar.day_of(end) >= first


def records_active_on(
    deps: LedgerDeps,
    day: date,
    since: datetime,
    now: datetime,
    rollups: dict[str, list[dict[str, Any]]] | None = None,
) -> Iterator[tuple[str, JobRecords]]:
    """Each job that accrued on ``day``, with its records from ``since``, by job id: what
    the day's summary and its operations figures both walk (with the checkpoint objects
    stored at ``since`` or later only)."""
    jobs = rollups if rollups is not None else all_rollups(deps.rollups)
    for job_id in sorted(jobs):
        if not active_between(jobs[job_id], day, day, now, calendar_of(deps.config)):
            continue
        records = load_job(deps.table, deps.rollups, job_id, since=since, window=True)
        if records is not None:
            yield job_id, records


def get_job_cost(
    deps: LedgerDeps, job_id: str, now: datetime, since: datetime | None = None
) -> JobCost:
    """One job's cost accrued to ``now`` (JobNotFound when the ledger has nothing of it)."""
    records = load_job(deps.table, deps.rollups, job_id, since=since)
    if records is None:
        raise JobNotFound(job_id)
    return cost_of(deps, records, now)


def cost_of(deps: LedgerDeps, records: JobRecords, now: datetime) -> JobCost:
    config = deps.config
    return job_cost(
        records,
        now,
        deps.prices.clock,
        deps.prices.series,
        marker=bool(config.checkpoint.completion_marker),
        tokens_tag=config.checkpoint.tokens_per_step_tag,
        accelerator_counts=config.measurement.accelerator_counts,
        measurable=lambda t: config.utilization.accelerator_metric(t) is not None,
    )
