"""Scheduled at each UTC midnight: mark every job that is still accruing cost (a running
instance, a stopped instance's volumes, a stored checkpoint) active on the new day, so
"jobs active on a day" needs no Scan. Writes grow with jobs, not with segments or ticks
(one write per job per day)."""

from __future__ import annotations

from datetime import date

from shared.ledger import Ledger


def mark_running_jobs_active(ledger: Ledger, day: date, grouping_keys: tuple[str, ...]) -> int:
    """Mark each job with an open segment active on ``day``; returns the jobs marked."""
    jobs: dict[str, dict[str, str]] = {}
    for record in ledger.open_instances():
        tags = {k: v for k, v in record.profile.tags.items() if k in grouping_keys}
        jobs.setdefault(record.job_id, tags)
    for job_id, tags in ledger.accruing_jobs().items():  # stopped volumes, checkpoints
        jobs.setdefault(job_id, {k: v for k, v in tags.items() if k in grouping_keys})
    for job_id, tags in jobs.items():
        ledger.touch_job_days(job_id, [day], tags)
    return len(jobs)
