"""Scheduled at each UTC midnight. Rollups already know which jobs accrue on a day (their
open accruals), so nothing has to be marked; the run reports the jobs still accruing."""

from __future__ import annotations

from datetime import date
from typing import Any


def mark_running_jobs_active(deps: Any, day: date) -> int:
    """The number of jobs still accruing as the day starts (no writes)."""
    from shared.domain import accrual as acc
    from shared.services.job_view import all_rollups

    jobs = all_rollups(deps.rollups)
    return sum(
        1
        for rollups in jobs.values()
        if acc.total(acc.from_attributes(r) for r in rollups).is_open()
    )
