"""The job-cost API (API Gateway REST, IAM auth): wiring only.

Every 4xx has one shape (``shared.api_errors``): bad input is a 400 naming the
parameter or field, never echoing the input; a denied job 403, an unknown one 404; a
budget defined in CDK context is not changed here (409). Access fails closed: a caller
no ``ledger.access`` rule matches (every caller, with no rules) gets 403 on every route.
Path ids arrive percent-encoded (as API Gateway REST passes them) and are decoded
here. Costs are accrued to the clock's now.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Annotated, Any, Literal
from urllib.parse import unquote

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.exceptions import NotFoundError, ServiceError
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shared import runtime
from shared.access import Caller, denial, resolve_caller
from shared.api_errors import (
    ApiProblem,
    bad_input,
    forbidden,
    from_validation_errors,
    not_found,
)
from shared.budgets import BUDGET_ID, Budget, BudgetScope, period_bounds
from shared.domain.job import JobCost, JobRecords, _tags
from shared.services.budgets import JobCache, budget_status, effective_budgets
from shared.services.change import change_json, scope_change
from shared.services.idle_now import idle_now
from shared.services.job_queries import list_jobs as query_jobs
from shared.services.job_queries import readable_records
from shared.services.job_view import cost_of, load_sealed
from shared.services.timeline import cumulative_points
from shared.views import (
    compare_jobs,
    estimate_to_finish,
    iso,
    job_detail,
    job_line_items,
    job_summary,
    money,
)

logger = Logger(service="costtracker")
app = APIGatewayRestResolver(enable_validation=True)

MAX_RANGE_DAYS = 93
# GET /change: a period against the same period a year before, at most.
MAX_CHANGE_SPAN_DAYS = 366 + MAX_RANGE_DAYS
MAX_JOB_ID = 256
# A job id in a path, percent-encoded as API Gateway REST passes it (decoded by _job_id).
JobIdInPath = Annotated[
    str,
    Path(
        min_length=1,
        max_length=3 * 4 * MAX_JOB_ID,
        description=f"the job id, percent-encoded (at most {MAX_JOB_ID} characters decoded)",
    ),
]


def _caller() -> Caller:
    """Who is asking (IAM auth: API Gateway verified the SigV4 signature)."""
    identity = app.current_event.request_context.identity
    access = runtime.current_settings().config.access
    caller = resolve_caller(identity.user_arn, access)
    if caller is None:
        raise forbidden(denial(identity.user_arn, access))
    return caller


def _finance_or_admin(what: str) -> Caller:
    caller = _caller()
    if not caller.sees_everything:
        raise forbidden(
            f"{what} is for finance and admins (ledger.access.rules); "
            f"you are a member of team {caller.team}"
        )
    return caller


# A page offset beyond this is not one the API issued (no listing is this long).
MAX_OFFSET = 1_000_000


def _decode_token(token: str | None) -> int:
    """The offset in a ``next_token``: an integer in [0, MAX_OFFSET], else a 400 (a forged
    ``{"offset": 1e999}`` is an infinite float, refused like any other non-integer)."""
    if not token:
        return 0
    refused = bad_input(
        "next_token", "not a token this API issued: pass the next_token of the previous page"
    )
    try:
        decoded = json.loads(base64.urlsafe_b64decode(token.encode()))
    except (ValueError, TypeError) as exc:  # binascii.Error and UnicodeError are ValueErrors
        raise refused from exc
    offset = decoded.get("offset") if isinstance(decoded, dict) else None
    if type(offset) is not int or not 0 <= offset <= MAX_OFFSET:
        raise refused
    return offset


def _encode_token(offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"offset": offset}).encode()).decode()


@app.get("/jobs")
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
) -> dict[str, Any]:
    """Jobs active between ``from`` and ``to`` (UTC days, default the last 7). A team
    member sees only their team's jobs."""
    caller = _caller()
    access = runtime.current_settings().config.access
    if not caller.sees_everything:
        if team is not None and team != caller.team:
            raise ApiProblem(403, f"you may list only team {caller.team}'s jobs", "team")
        team = caller.team
    now = runtime.clock().now()
    last = to or now.date()
    first = from_ or last - timedelta(days=6)
    if first > last:
        raise bad_input("from", "must not be after to")
    if (last - first).days >= MAX_RANGE_DAYS:
        raise bad_input("from", f"the range may span at most {MAX_RANGE_DAYS} days")
    # `team` is the value of the team tag, whichever key the teams are tagged with.
    filters = {
        k: v
        for k, v in {"project": project, access.team_tag_key: team, "owner": owner}.items()
        if v
    }
    offset = _decode_token(next_token)
    page, matched = query_jobs(
        runtime.ledger_deps(),
        now,
        first=first,
        last=last,
        tag_filters=filters,
        status=status,
        sort=sort,
        offset=offset,
        limit=limit,
    )
    more = offset + limit < matched
    return {
        "jobs": [job_summary(j) for j in page],
        "next_token": _encode_token(offset + limit) if more else None,
        "from": first.isoformat(),
        "to": last.isoformat(),
    }


@app.get("/jobs/<job_id>")
def get_job(job_id: JobIdInPath) -> dict[str, Any]:
    """One job's cost breakdown, accrued to now (a denied or unknown job: the same 403)."""
    return job_detail(_readable_job(_job_id(job_id))[0])


def _budget_view(budget: Budget, source: str, cache: JobCache | None = None) -> dict[str, Any]:
    now = runtime.clock().now()
    config = runtime.current_settings().config
    deps = runtime.ledger_deps()
    status = budget_status(deps, config, budget, now, cache or JobCache(deps))
    period_start, period_end, _ = period_bounds(budget, now)
    return {
        **budget.model_dump(mode="json"),
        "source": source,
        "period_key": status.period_key,
        "period_start": iso(period_start),
        "period_end": iso(period_end),
        "spend_usd": money(status.spend),
        "percent": f"{status.percent:.2f}",
        "burn_rate_usd_per_hour": money(status.burn_per_hour),
        "projected_total_usd": money(status.projected_total),
        "projected_until": iso(status.projected_until),
        "crossing_100_at": iso(status.crossing_100_at),
        "spend_by_job": {k: money(v) for k, v in sorted(status.spend_by_job.items())},
    }


def _sources(stored: dict[str, Budget | None] | None = None) -> dict[str, str]:
    """Where each budget comes from (CDK context or the API)."""
    if stored is None:
        stored = runtime.budget_store().stored_budgets()
    config = runtime.current_settings().config
    sources = {b.budget_id: "context" for b in config.budgets}
    for budget_id, budget in stored.items():
        if budget is None:
            sources.pop(budget_id, None)
        else:
            sources[budget_id] = "api"
    return sources


def _job_id(raw: str) -> str:
    """The job id of a path segment: percent-decoded (UTF-8), of a sane length."""
    try:
        job_id = unquote(raw, errors="strict") if "%" in raw else raw
    except UnicodeDecodeError as exc:
        raise bad_input("job_id", "not percent-encoded UTF-8") from exc
    if not job_id.strip() or len(job_id) > MAX_JOB_ID:
        raise bad_input("job_id", f"give a job id of 1 to {MAX_JOB_ID} characters")
    return job_id


def _readable_job(job_id: str) -> tuple[JobCost, JobRecords]:
    """A job the caller may read, with its records (one Query); else 403/404 as in
    GET /jobs/{job_id}."""
    caller = _caller()
    config = runtime.current_settings().config
    denied = forbidden(
        f"job {job_id!r} is not visible to team {caller.team} (not your team's job, or none)"
    )
    deps = runtime.ledger_deps()
    records = readable_records(deps, job_id)
    if records is None:
        if not caller.sees_everything:
            raise denied
        raise not_found("job_id", f"no job {job_id!r}")
    cost = cost_of(deps, records, runtime.clock().now())
    if not caller.may_read(cost.tags, config.access.team_tag_key):
        raise denied
    return cost, records


@app.get("/jobs/<job_id>/items")
def job_items(
    job_id: JobIdInPath,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    next_token: Annotated[str | None, Query(max_length=512)] = None,
) -> dict[str, Any]:
    """The job's line items: segments, checkpoints, interruptions, idle periods."""
    job_id = _job_id(job_id)
    cost, items = _readable_job(job_id)
    lines = job_line_items(cost, items, runtime.clock().now())
    offset = _decode_token(next_token)
    more = offset + limit < len(lines)
    return {
        "job_id": job_id,
        "items": lines[offset : offset + limit],
        "next_token": _encode_token(offset + limit) if more else None,
    }


@app.get("/jobs/<job_id>/timeline")
def job_timeline(
    job_id: JobIdInPath,
    points: Annotated[int, Query(ge=2, le=500)] = 100,
) -> dict[str, Any]:
    """Cumulative cost over time, evenly spaced from the job's start to now (for plotting):
    the total and its instance, EBS and checkpoint-storage parts."""
    job_id = _job_id(job_id)
    cost, items = _readable_job(job_id)
    now = runtime.clock().now()
    start = cost.started_at or now
    load_sealed(runtime.ledger_deps().table, items, start)
    series = cumulative_points(items, start, now, points, runtime.ledger_deps().prices.series)
    return {"job_id": job_id, "points": series}


@app.get("/jobs/<job_id>/estimate")
def estimate(
    job_id: JobIdInPath,
    target_steps: Annotated[int, Query(ge=1, le=10**12)],
    utilization_drop: Annotated[Decimal, Query(ge=0, lt=1)] = Decimal("0.2"),
) -> dict[str, Any]:
    """The projected cost to reach ``target_steps``, as a range with its assumptions."""
    job_id = _job_id(job_id)
    cost, _ = _readable_job(job_id)
    try:
        return estimate_to_finish(cost, target_steps, utilization_drop, runtime.clock().now())
    except ValueError as exc:
        raise bad_input("target_steps", f"job {job_id!r} {exc}") from exc


@app.get("/compare")
def compare(jobs: Annotated[str, Query(min_length=1, max_length=800)]) -> dict[str, Any]:
    """Jobs side by side (e.g. Trainium vs GPU for the same work), with what is not
    comparable said plainly."""
    job_ids = [j.strip() for j in jobs.split(",") if j.strip()]
    if not 2 <= len(job_ids) <= 5:
        raise bad_input("jobs", "give 2 to 5 comma-separated job ids")
    readable = [_readable_job(job_id) for job_id in job_ids]
    return compare_jobs([cost for cost, _ in readable])


@app.get("/idle")
def idle_accelerators() -> dict[str, Any]:
    """Accelerators idle (accelerator and CPU alarms low) or input-bound (accelerator low,
    CPU busy) now, since when and what that stretch has cost; a team member sees their
    team's. Utilization here is the instances' own alarms' view, not a metric read."""
    caller = _caller()
    config = runtime.current_settings().config
    now = runtime.clock().now()
    deps = runtime.ledger_deps()
    by_job: dict[str, list[Any]] = {}
    for head in deps.instances.open_heads():
        by_job.setdefault(head.job_id, []).append(head)
    rollups = deps.rollups.all() if not caller.sees_everything else []
    rows = []
    for job_id, heads in sorted(by_job.items()):
        if not caller.sees_everything:
            tags, _ = _tags([r for r in rollups if r.get("job_id") == job_id])
            if not caller.may_read(tags, config.access.team_tag_key):
                continue
        rows += idle_now(heads, now, deps.prices.series)
    return {"instances": rows, "as_of": iso(now), "estimated": True}


@app.get("/change")
def spend_change(
    from0: Annotated[date, Query()],
    to0: Annotated[date, Query()],
    from1: Annotated[date, Query()],
    to1: Annotated[date, Query()],
    project: Annotated[str | None, Query(max_length=256)] = None,
    team: Annotated[str | None, Query(max_length=256)] = None,
    job_id: Annotated[str | None, Query(min_length=1, max_length=MAX_JOB_ID)] = None,
) -> dict[str, Any]:
    """Why spend changed from period 0 (``from0``..``to0``, UTC days) to period 1: usage =
    (H1 - H0) x r0 and rate = (r1 - r0) x H1 (H accelerator instance-hours, r $ per such
    hour), beside the change in wasted cost and in cost per 1,000 steps. A team member's
    scope is their team."""
    caller = _caller()
    if not caller.sees_everything:
        if team is not None and team != caller.team:
            raise ApiProblem(403, f"you may see only team {caller.team}'s spend", "team")
        team = caller.team
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
    if job_id is not None:
        _readable_job(job_id)
    config = runtime.current_settings().config
    # `team` is the value of the team tag (a team member's: their own, set above).
    filters = {k: v for k, v in {"project": project, config.access.team_tag_key: team}.items() if v}
    change = scope_change(
        runtime.ledger_deps(),
        runtime.clock().now(),
        periods[0],
        periods[1],
        filters,
        job_id,
    )
    return {
        "scope": {"project": project, "team": team, "job_id": job_id},
        **change_json(change),
        "as_of": iso(runtime.clock().now()),
    }


@app.get("/prices")
def prices(
    instance_type: Annotated[str, Query(min_length=2, max_length=64, pattern=r"^[a-z0-9.\-]+$")],
    region: Annotated[str, Query(pattern=r"^[a-z]{2}(-[a-z]+)+-\d$")] = "us-east-1",
    platform: Annotated[str, Query(max_length=64)] = "Linux/UNIX",
) -> dict[str, Any]:
    """The on-demand rate the ledger would use now, with its source and check date."""
    _caller()
    rate = runtime.ledger_deps().prices.on_demand(region, instance_type, platform)
    if rate is None:
        raise not_found(
            "instance_type",
            f"no price known for {instance_type} in {region} ({platform}); it would be "
            "kept unpriced until one is configured or listed",
        )
    return {
        "instance_type": instance_type,
        "region": region,
        "platform": platform,
        "list_usd_per_hour": money(rate.list_usd),
        "effective_usd_per_hour": money(rate.effective_usd),
        "source": rate.source.value,
        "checked_on": rate.checked_on.isoformat(),
    }


@app.get("/budgets")
def list_budgets() -> dict[str, Any]:
    """Every budget with its spend so far in the current period (a team member: the
    budgets scoped to their team)."""
    caller = _caller()
    config = runtime.current_settings().config
    stored = runtime.budget_store().stored_budgets()  # one Query, used twice
    sources = _sources(stored)
    budgets = [
        b
        for b in effective_budgets(runtime.budget_store(), config, stored)
        if caller.sees_everything
        or (b.scope.tag or {}).get(config.access.team_tag_key) == caller.team
    ]
    cache = JobCache(runtime.ledger_deps())  # every job's rollups are read once
    return {"budgets": [_budget_view(b, sources.get(b.budget_id, "api"), cache) for b in budgets]}


@app.get("/budgets/<budget_id>")
def get_budget(budget_id: Annotated[str, Path(pattern=BUDGET_ID)]) -> dict[str, Any]:
    _finance_or_admin("a single budget")
    config = runtime.current_settings().config
    for budget in effective_budgets(runtime.budget_store(), config):
        if budget.budget_id == budget_id:
            return _budget_view(budget, _sources().get(budget_id, "api"))
    raise not_found("budget_id", f"no budget {budget_id!r}")


class BudgetBody(BaseModel):
    """A budget as PUT by a caller; the id comes from the path."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    scope: BudgetScope
    amount_usd: Decimal = Field(gt=0, max_digits=16, decimal_places=6)
    period: Literal["total", "month", "day"] = "total"
    thresholds: list[int] = Field(default=[50, 80, 100], min_length=1, max_length=20)
    recipients: list[str] = Field(default_factory=list, max_length=20)
    since: date | None = None


@app.put("/budgets/<budget_id>")
def put_budget(
    budget_id: Annotated[str, Path(pattern=BUDGET_ID)], body: Annotated[BudgetBody, Body()]
) -> dict[str, Any]:
    """Create or replace a budget; it is validated like a budget in CDK context. The
    change is recorded (GET /budgets/{budget_id}/history)."""
    caller = _finance_or_admin("setting budgets")
    config = runtime.current_settings().config
    _refuse_context_budget(budget_id, "changed")
    try:
        budget = Budget.model_validate({"budget_id": budget_id, **body.model_dump()})
        budget.check_tag_keys(config.known_tag_keys())
    except ValidationError as exc:
        raise from_validation_errors(exc.errors()) from exc
    except ValueError as exc:  # "scope.tag.<key>: unknown tag key (known: ...)"
        field, _, message = str(exc).partition(": ")
        raise bad_input(field, message) from exc
    before = runtime.budget_store().stored_budgets().get(budget_id)
    changes = _change_budget(caller, budget_id, before, budget)
    return {**_budget_view(budget, "api"), "subscriptions": changes}


@app.delete("/budgets/<budget_id>")
def delete_budget(budget_id: Annotated[str, Path(pattern=BUDGET_ID)]) -> dict[str, Any]:
    """Delete a budget set through the API; the deletion is recorded in its history."""
    caller = _finance_or_admin("deleting budgets")
    _refuse_context_budget(budget_id, "deleted")
    before = runtime.budget_store().stored_budgets().get(budget_id)
    if before is None:
        raise not_found("budget_id", f"no budget {budget_id!r}")
    changes = _change_budget(caller, budget_id, before, None)
    return {"budget_id": budget_id, "deleted": True, "subscriptions": changes}


@app.get("/budgets/<budget_id>/history")
def budget_history(budget_id: Annotated[str, Path(pattern=BUDGET_ID)]) -> dict[str, Any]:
    """Every change made to a budget through the API: who (the caller's ARN), when,
    and the budget before and after (null: absent / deleted)."""
    _finance_or_admin("a budget's history")
    changes = runtime.budget_store().budget_history(budget_id)
    if not changes and budget_id not in _sources():
        raise not_found("budget_id", f"no budget {budget_id!r}")
    return {"budget_id": budget_id, "changes": changes}


def _refuse_context_budget(budget_id: str, verb: str) -> None:
    """Budgets from CDK context are managed where they are defined, not by the API."""
    if any(b.budget_id == budget_id for b in runtime.current_settings().config.budgets):
        raise ApiProblem(
            409,
            f"budget {budget_id!r} is defined in CDK context (ledger.budgets) and cannot be "
            f"{verb} through the API; change it there and deploy",
            "budget_id",
        )


def _change_budget(
    caller: Caller, budget_id: str, before: Budget | None, after: Budget | None
) -> dict[str, list[str]]:
    """Record the change; the recipients' email subscriptions follow it."""
    from botocore.exceptions import BotoCoreError, ClientError

    from shared.adapters.subscriptions import RecipientSubscriptions
    from shared.services.recipients import change_budget

    topic = runtime.current_settings().finance_topic_arn
    subscriptions = RecipientSubscriptions(runtime.client("sns"), topic) if topic else None

    def record() -> list[Budget]:
        _record_change(caller, budget_id, before, after)
        return effective_budgets(runtime.budget_store(), runtime.current_settings().config)

    try:
        return change_budget(subscriptions, before, after, record)
    except (ClientError, BotoCoreError) as exc:
        raise ApiProblem(
            503, f"the recipients' email subscriptions could not be changed ({exc}); try again"
        ) from exc


def _record_change(
    caller: Caller, budget_id: str, before: Budget | None, after: Budget | None
) -> None:
    change = {
        "at": iso(runtime.clock().now()),
        "who": caller.arn,
        "role": caller.role,
        "action": "delete" if after is None else ("create" if before is None else "update"),
        "before": before.model_dump(mode="json") if before is not None else None,
        "after": after.model_dump(mode="json") if after is not None else None,
    }
    runtime.budget_store().put_budget_change(budget_id, after, change)


@app.get("/summaries/<day>")
def get_summary(day: Annotated[date, Path()]) -> dict[str, Any]:
    """The stored daily summary of one UTC day (written by the daily run or a backfill)."""
    _finance_or_admin("the daily summary")
    found = runtime.summary_store().get_summaries([day])
    if day not in found:
        raise not_found("day", f"no summary for {day.isoformat()} (yet)")
    return found[day]


@app.get("/reconciliations/<day>")
def get_reconciliation(day: Annotated[date, Path()]) -> dict[str, Any]:
    """A day's estimate against the bill (per job, with the accuracy), once reconciled."""
    _finance_or_admin("reconciliation")
    found = runtime.reconciliation_store().get_reconciliations([day])
    if day not in found:
        raise not_found("day", f"{day.isoformat()} is not reconciled (yet, or not enabled)")
    return found[day]


@app.get("/summaries")
def list_summaries(
    from_: Annotated[date, Query(alias="from")],
    to: Annotated[date, Query()],
    group_by: Annotated[str | None, Query(max_length=128)] = None,
) -> dict[str, Any]:
    """Daily totals over a range (at most 93 days); ``group_by`` a grouping tag key gives
    each day's split by that tag."""
    _finance_or_admin("daily summaries")
    if from_ > to:
        raise bad_input("from", "must not be after to")
    if (to - from_).days >= MAX_RANGE_DAYS:
        raise bad_input("from", f"the range may span at most {MAX_RANGE_DAYS} days")
    keys = runtime.current_settings().config.tracking.grouping_tag_keys
    if group_by is not None and group_by not in keys:
        raise bad_input("group_by", f"not a grouping tag key (one of {', '.join(keys)})")
    days = [from_ + timedelta(days=n) for n in range((to - from_).days + 1)]
    found = runtime.summary_store().get_summaries(days)
    out = []
    for day in days:
        summary = found.get(day)
        if summary is None:
            out.append({"date": day.isoformat(), "available": False})
            continue
        entry = {
            "date": day.isoformat(),
            "available": True,
            "total_usd": summary["total_usd"],
            "untagged_usd": summary["untagged_usd"],
        }
        if group_by is not None:
            entry["by_tag"] = summary["by_tag"].get(group_by, {})
        out.append(entry)
    return {"from": from_.isoformat(), "to": to.isoformat(), "group_by": group_by, "days": out}


def _problem_response(problem: ApiProblem) -> Response[dict[str, Any]]:
    return Response(
        status_code=problem.status,
        content_type=content_types.APPLICATION_JSON,
        body=problem.body(),
    )


@app.exception_handler(ApiProblem)
def api_problem(problem: ApiProblem) -> Response[dict[str, Any]]:
    return _problem_response(problem)


@app.exception_handler(RequestValidationError)
def invalid_request(error: RequestValidationError) -> Response[dict[str, Any]]:
    """400 naming each bad parameter or field and why (pydantic's rule, never the input)."""
    return _problem_response(from_validation_errors(error.errors()))


@app.exception_handler(ServiceError)
def service_error(error: ServiceError) -> Response[dict[str, Any]]:
    """Powertools' own client errors (e.g. a body it cannot read), in the same shape."""
    status = error.status_code if 400 <= error.status_code < 500 else 400
    return _problem_response(ApiProblem(status, str(error.msg)))


@app.not_found
def no_route(error: NotFoundError) -> Response[dict[str, Any]]:
    method = app.current_event.http_method
    return _problem_response(
        ApiProblem(404, f"no {method} route at this path: /openapi.json lists the API's routes")
    )


def _unsupported_body(event: dict[str, Any]) -> dict[str, Any] | None:
    """A body that is not JSON is a 415 here, before the resolver tries to parse it (a
    PUT or POST declaring another type is one even when empty: the resolver would try to
    parse it as that type)."""
    headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    if not event.get("body") and not (
        event.get("httpMethod") in ("PUT", "POST", "PATCH") and "content-type" in headers
    ):
        return None
    content_type = str(headers.get("content-type", "application/json")).lower()
    if content_type.split(";")[0].strip() in ("application/json", ""):
        return None
    problem = ApiProblem(415, "send the body as application/json", "Content-Type")
    return {
        "statusCode": 415,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps(problem.body()),
        "isBase64Encoded": False,
    }


@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _unsupported_body(event) or app.resolve(event, context)
