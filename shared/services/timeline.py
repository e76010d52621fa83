"""A job's cumulative cost over time, split by component (for plotting)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from shared.domain.day_split import job_between
from shared.domain.job import JobRecords
from shared.domain.segments import SeriesReader
from shared.reports.formatting import iso, money


def cumulative_points(
    records: JobRecords,
    start: datetime,
    now: datetime,
    points: int,
    series: SeriesReader | None,
) -> list[dict[str, Any]]:
    """``points`` evenly spaced times from ``start`` to ``now``; at each, the cost accrued
    since the start: instance, EBS, checkpoint storage and their total (the last point
    equals the job's total). ``records`` must hold the sealed records since ``start``."""
    before = start - timedelta(seconds=1)
    out = []
    for n in range(points):
        at = start + (now - start) * n / (points - 1) if points > 1 else now
        inside, _ = job_between(records, before, at, now, series)
        out.append(
            {
                "at": iso(at),
                "total_usd": money(inside["total"]),
                "instance_usd": money(inside["instance"]),
                "ebs_usd": money(inside["ebs"]),
                "checkpoint_storage_usd": money(inside["checkpoint_storage"]),
            }
        )
    return out
