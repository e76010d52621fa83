"""Why did spend change in a scope: its jobs read from the ledger, then split by
``shared.domain.spend_change`` (use, efficiency, price; the method: docs/efficiency.md)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from shared.domain.job import JobRecords
from shared.domain.spend_change import ChangeDecomposition, decompose, period_figures

SECOND = timedelta(seconds=1)


def scope_change(
    deps: Any,
    now: datetime,
    before: tuple[datetime, datetime],
    after: tuple[datetime, datetime],
    tag_filters: dict[str, str],
    job_id: str | None = None,
) -> ChangeDecomposition:
    """The decomposition for the jobs of a scope (grouping-tag filters and/or one job),
    read from the ledger (the rollups, then each job in scope): the one function here
    that does I/O."""
    from shared.adapters.job_records import load_job
    from shared.domain.job import rollup_tags
    from shared.services.job_view import active_between, all_rollups

    first = min(before[0], after[0])
    last = (max(before[1], after[1]) - SECOND).date()
    rollups = all_rollups(deps.rollups)
    jobs: list[JobRecords] = []
    for candidate, items in sorted(rollups.items()):
        if job_id is not None and candidate != job_id:
            continue
        if not active_between(items, first.date(), last, now):
            continue
        tags, _ = rollup_tags(items)
        if any(tags.get(k) != v for k, v in tag_filters.items()):
            continue
        records = load_job(deps.table, deps.rollups, candidate, since=first)
        if records is not None:
            jobs.append(records)
    from shared.adapters.utilization_store import UtilizationStore

    series = deps.prices.series
    counts = deps.config.measurement.accelerator_counts
    measured = UtilizationStore(deps.table).between
    return decompose(
        period_figures(jobs, before[0], before[1], now, series, counts, measured),
        period_figures(jobs, after[0], after[1], now, series, counts, measured),
    )
