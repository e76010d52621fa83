"""GET /jobs and one job: its breakdown, line items, timeline and estimate to finish."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Annotated, Literal

from aws_lambda_powertools.event_handler.openapi.params import Query

from shared.api.caller import access, new_router, runtime_of
from shared.api.errors import bad_input
from shared.api.models.jobs import Estimate, JobDetail, JobItems, JobsPage, Timeline
from shared.api.params import JobIdInPath, check_range, decode_token, token_after, week_before
from shared.api.readable import readable_job

router = new_router()


@router.get("/jobs")
def list_jobs(
    project: Annotated[str | None, Query(max_length=256)] = None,
    team: Annotated[str | None, Query(max_length=256)] = None,
    owner: Annotated[str | None, Query(max_length=256)] = None,
    status: Annotated[
        Literal["running", "stopped", "interrupted", "complete"] | None, Query()
    ] = None,
    from_: Annotated[date | None, Query(alias="from")] = None,
    to: Annotated[date | None, Query()] = None,
    sort: Annotated[Literal["cost", "start"], Query()] = "cost",
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    next_token: Annotated[str | None, Query(max_length=512)] = None,
) -> JobsPage:
    """Jobs active between ``from`` and ``to`` (UTC days, default the last 7). A team
    member sees only their team's jobs."""
    from shared.reports.views import job_summary
    from shared.services.job_queries import list_jobs as query_jobs

    rt = runtime_of(router)
    policy = access(router)
    team = policy.team_scope(team, "list", "jobs")
    now = rt.clock.now()
    last = to or now.date()
    first = from_ or week_before(last)
    check_range(first, last, "from")
    offset = decode_token(next_token)
    page, matched = query_jobs(
        rt.ledger_deps(),
        now,
        first=first,
        last=last,
        tag_filters=policy.tag_filters(team, project=project, owner=owner),
        status=status,
        sort=sort,
        offset=offset,
        limit=limit,
    )
    return JobsPage.model_validate(
        {
            "jobs": [job_summary(j) for j in page],
            "next_token": token_after(offset, limit, matched),
            "from": first.isoformat(),
            "to": last.isoformat(),
        }
    )


@router.get("/jobs/<job_id>")
def get_job(job_id: JobIdInPath) -> JobDetail:
    """One job's cost breakdown, accrued to now (a denied or unknown job: the same 403)."""
    from shared.reports.views import job_detail

    rt = runtime_of(router)
    return JobDetail.model_validate(job_detail(readable_job(rt, access(router), job_id)[0]))


@router.get("/jobs/<job_id>/items")
def job_items(
    job_id: JobIdInPath,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    next_token: Annotated[str | None, Query(max_length=512)] = None,
) -> JobItems:
    """The job's line items: segments, checkpoints, interruptions, idle periods."""
    from shared.reports.views import job_line_items

    rt = runtime_of(router)
    cost, records = readable_job(rt, access(router), job_id)
    lines = job_line_items(cost, records, rt.clock.now())
    offset = decode_token(next_token)
    return JobItems.model_validate(
        {
            "job_id": job_id,
            "items": lines[offset : offset + limit],
            "next_token": token_after(offset, limit, len(lines)),
        }
    )


@router.get("/jobs/<job_id>/timeline")
def job_timeline(
    job_id: JobIdInPath,
    points: Annotated[int, Query(ge=2, le=500)] = 100,
) -> Timeline:
    """Cumulative cost over time, evenly spaced from the job's start to now (for plotting):
    the total and its instance, EBS and checkpoint-storage parts."""
    from shared.services.timeline import job_timeline as timeline

    rt = runtime_of(router)
    cost, records = readable_job(rt, access(router), job_id)
    now = rt.clock.now()
    series = timeline(rt.ledger_deps(), records, cost.started_at, now, points)
    return Timeline.model_validate({"job_id": job_id, "points": series})


@router.get("/jobs/<job_id>/estimate")
def estimate(
    job_id: JobIdInPath,
    target_steps: Annotated[int, Query(ge=1, le=10**12)],
    utilization_drop: Annotated[Decimal, Query(ge=0, lt=1)] = Decimal("0.2"),
) -> Estimate:
    """The projected cost to reach ``target_steps``, as a range with its assumptions."""
    from shared.reports.views import estimate_to_finish

    rt = runtime_of(router)
    cost, _ = readable_job(rt, access(router), job_id)
    try:
        found = estimate_to_finish(cost, target_steps, utilization_drop, rt.clock.now())
    except ValueError as exc:
        raise bad_input("target_steps", f"job {job_id!r} {exc}") from exc
    return Estimate.model_validate(found)
