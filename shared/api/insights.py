"""Across jobs: /compare side by side, /idle accelerators now, /change in spend, /prices."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import TYPE_CHECKING, Annotated

from aws_lambda_powertools.event_handler.openapi.params import Query

from shared.api.caller import access, new_router, runtime_of
from shared.api.errors import bad_input, not_found
from shared.api.models.insights import Comparison, IdleNow, Price, SpendChange
from shared.api.params import MAX_CHANGE_SPAN_DAYS, MAX_JOB_ID, MAX_RANGE_DAYS
from shared.api.readable import readable_job
from shared.reports.formatting import iso, money

if TYPE_CHECKING:
    from shared.domain.instance import InstanceHead

router = new_router()


@router.get("/compare")
def compare(jobs: Annotated[str, Query(min_length=1, max_length=800)]) -> Comparison:
    """Jobs side by side (e.g. Trainium vs GPU for the same work), with what is not
    comparable said plainly."""
    from shared.reports.compare import compare_jobs

    rt = runtime_of(router)
    job_ids = [j.strip() for j in jobs.split(",") if j.strip()]
    if not 2 <= len(job_ids) <= 5:
        raise bad_input("jobs", "give 2 to 5 comma-separated job ids")
    policy = access(router)
    readable = [readable_job(rt, policy, job_id) for job_id in job_ids]
    config = rt.settings.config
    return Comparison.model_validate(compare_jobs([cost for cost, _ in readable], config))


@router.get("/idle")
def idle_accelerators() -> IdleNow:
    """Accelerators idle (accelerator and CPU alarms low) or input-bound (accelerator low,
    CPU busy) now, since when and what that stretch has cost; a team member sees their
    team's. Utilization here is the instances' own alarms' view, not a metric read."""
    from shared.domain.job import rollup_tags
    from shared.services.idle_now import idle_now

    rt = runtime_of(router)
    policy = access(router)
    now = rt.clock.now()
    deps = rt.ledger_deps()
    by_job: dict[str, list[InstanceHead]] = {}
    for head in deps.instances.open_heads():
        by_job.setdefault(head.job_id, []).append(head)
    rollups = deps.rollups.all() if not policy.sees_everything else []
    rows = []
    for job_id, heads in sorted(by_job.items()):
        if not policy.sees_everything:
            tags, _ = rollup_tags([r for r in rollups if r.get("job_id") == job_id])
            if not policy.may_read(tags):
                continue
        rows += idle_now(heads, now, deps.prices.series)
    return IdleNow.model_validate({"instances": rows, "as_of": iso(now), "estimated": True})


def _periods(from0: date, to0: date, from1: date, to1: date) -> list[tuple[datetime, datetime]]:
    """The two periods as [start, end) instants, each checked."""
    periods = []
    for name, first, last in (("from0", from0, to0), ("from1", from1, to1)):
        if first > last:
            raise bad_input(name, f"must not be after to{name[-1]}")
        if (last - first).days >= MAX_RANGE_DAYS:
            raise bad_input(name, f"a period may span at most {MAX_RANGE_DAYS} days")
        if last >= date.max:
            raise bad_input(f"to{name[-1]}", "give a day before 9999-12-31")
        start = datetime.combine(first, time(0), tzinfo=UTC)
        periods.append((start, datetime.combine(last + timedelta(days=1), time(0), tzinfo=UTC)))
    if (max(to0, to1) - min(from0, from1)).days >= MAX_CHANGE_SPAN_DAYS:
        raise bad_input(
            "from0",
            f"the two periods must lie within {MAX_CHANGE_SPAN_DAYS} days of each other "
            "(every day between them is read)",
        )
    return periods


@router.get("/change")
def spend_change(
    from0: Annotated[date, Query()],
    to0: Annotated[date, Query()],
    from1: Annotated[date, Query()],
    to1: Annotated[date, Query()],
    project: Annotated[str | None, Query(max_length=256)] = None,
    team: Annotated[str | None, Query(max_length=256)] = None,
    job_id: Annotated[str | None, Query(min_length=1, max_length=MAX_JOB_ID)] = None,
) -> SpendChange:
    """Why spend changed from period 0 (``from0``..``to0``, UTC days) to period 1: usage =
    (H1 - H0) x r0 and rate = (r1 - r0) x H1 (H accelerator instance-hours, r $ per such
    hour), beside the change in wasted cost and in cost per 1,000 steps. A team member's
    scope is their team."""
    from shared.services.change import change_json, scope_change

    rt = runtime_of(router)
    policy = access(router)
    team = policy.team_scope(team, "see", "spend")
    periods = _periods(from0, to0, from1, to1)
    if job_id is not None:
        readable_job(rt, policy, job_id)
    now = rt.clock.now()
    change = scope_change(
        rt.ledger_deps(),
        now,
        periods[0],
        periods[1],
        policy.tag_filters(team, project=project),
        job_id,
    )
    return SpendChange.model_validate(
        {
            "scope": {"project": project, "team": team, "job_id": job_id},
            **change_json(change),
            "as_of": iso(rt.clock.now()),
        }
    )


@router.get("/prices")
def prices(
    instance_type: Annotated[str, Query(min_length=2, max_length=64, pattern=r"^[a-z0-9.\-]+$")],
    region: Annotated[str, Query(pattern=r"^[a-z]{2}(-[a-z]+)+-\d$")] = "us-east-1",
    platform: Annotated[str, Query(max_length=64)] = "Linux/UNIX",
) -> Price:
    """The on-demand rate the ledger would use now, with its source and check date."""
    rt = runtime_of(router)
    rate = rt.ledger_deps().prices.on_demand(region, instance_type, platform)
    if rate is None:
        raise not_found(
            "instance_type",
            f"no price known for {instance_type} in {region} ({platform}); it would be "
            "kept unpriced until one is configured or listed",
        )
    return Price(
        instance_type=instance_type,
        region=region,
        platform=platform,
        list_usd_per_hour=money(rate.list_usd),
        effective_usd_per_hour=money(rate.effective_usd),
        source=rate.source.value,
        checked_on=rate.checked_on.isoformat(),
    )
