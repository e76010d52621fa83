"""A job the caller may read, with its records: the one place the API reads a job."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shared.api.errors import not_found
from shared.api.policy import AccessPolicy

if TYPE_CHECKING:
    from shared.app.runtime import Runtime
    from shared.domain.job import JobCost, JobRecords


def readable_job(rt: Runtime, policy: AccessPolicy, job_id: str) -> tuple[JobCost, JobRecords]:
    """The job's cost accrued to now and its records (one Query); a job the caller may not
    read is a 403, and so is an unknown one for a team member (finance: a 404)."""
    from shared.adapters.job_records import load_job
    from shared.services.job_view import cost_of

    deps = rt.ledger_deps()
    records = load_job(deps.table, deps.rollups, job_id)
    if records is None:
        if not policy.sees_everything:
            raise policy.job_denied(job_id)
        raise not_found("job_id", f"no job {job_id!r}")
    cost = cost_of(deps, records, rt.clock.now())
    if not policy.may_read(cost.tags):
        raise policy.job_denied(job_id)
    return cost, records
