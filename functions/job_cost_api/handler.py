"""The job-cost API (API Gateway REST, IAM auth): wiring only.

Bad parameters are answered 422 by the resolver's validation with the
parameter named; unknown jobs 404. Costs are accrued to the clock's now.
"""

from __future__ import annotations

import base64
import json
from datetime import date, timedelta
from decimal import Decimal
from typing import Annotated, Any, Literal

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.exceptions import (
    BadRequestError,
    ForbiddenError,
    NotFoundError,
    ServiceError,
)
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shared import runtime
from shared.access import Caller, denial, resolve_caller
from shared.budgets import BUDGET_ID, Budget, BudgetScope
from shared.costing import spend_between
from shared.ledger import JobItems
from shared.models import JobCost
from shared.services.budgets import JobCache, budget_status, effective_budgets
from shared.services.jobs import cost_of_items, list_job_costs
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


def _caller() -> Caller:
    """Who is asking (IAM auth: API Gateway verified the SigV4 signature)."""
    identity = app.current_event.request_context.identity
    access = runtime.current_settings().config.access
    caller = resolve_caller(identity.user_arn, access)
    if caller is None:
        raise ForbiddenError(denial(identity.user_arn, access))
    return caller


def _finance_or_admin(what: str) -> Caller:
    caller = _caller()
    if not caller.sees_everything:
        raise ForbiddenError(
            f"{what} is for finance and admins (ledger.access.rules); "
            f"you are a member of team {caller.team}"
        )
    return caller


def _decode_token(token: str | None) -> int:
    if not token:
        return 0
    try:
        offset = int(json.loads(base64.urlsafe_b64decode(token.encode()))["offset"])
    except (ValueError, KeyError, TypeError) as exc:
        raise BadRequestError("next_token: not a token this API issued") from exc
    if offset < 0:
        raise BadRequestError("next_token: not a token this API issued")
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
            raise ForbiddenError(f"team: you may list only team {caller.team}'s jobs")
        team = caller.team
    now = runtime.clock().now()
    last = to or now.date()
    first = from_ or last - timedelta(days=6)
    if first > last:
        raise BadRequestError("from: must not be after to")
    if (last - first).days >= MAX_RANGE_DAYS:
        raise BadRequestError(f"from: the range may span at most {MAX_RANGE_DAYS} days")
    # `team` is the value of the team tag, whichever key the teams are tagged with.
    filters = {
        k: v
        for k, v in {"project": project, access.team_tag_key: team, "owner": owner}.items()
        if v
    }
    jobs = list_job_costs(
        runtime.ledger(),
        runtime.current_settings().config,
        now,
        first=first,
        last=last,
        tag_filters=filters,
        status=status,
    )
    if sort == "cost":
        jobs.sort(key=lambda j: (-j.total_usd, j.job_id))
    else:
        jobs.sort(key=lambda j: (j.started_at or now, j.job_id))
    offset = _decode_token(next_token)
    page = jobs[offset : offset + limit]
    more = offset + limit < len(jobs)
    return {
        "jobs": [job_summary(j) for j in page],
        "next_token": _encode_token(offset + limit) if more else None,
        "from": first.isoformat(),
        "to": last.isoformat(),
    }


@app.get("/jobs/<job_id>")
def get_job(job_id: Annotated[str, Path(min_length=1, max_length=256)]) -> dict[str, Any]:
    """One job's cost breakdown, accrued to now (a denied or unknown job: the same 403)."""
    return job_detail(_readable_job(job_id)[0])


def _budget_view(budget: Budget, source: str, cache: JobCache | None = None) -> dict[str, Any]:
    now = runtime.clock().now()
    config = runtime.current_settings().config
    status = budget_status(
        runtime.ledger(), config, budget, now, cache or JobCache(runtime.ledger())
    )
    return {
        **budget.model_dump(mode="json"),
        "source": source,
        "period_key": status.period_key,
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
        stored = runtime.ledger().stored_budgets()
    config = runtime.current_settings().config
    sources = {b.budget_id: "context" for b in config.budgets}
    for budget_id, budget in stored.items():
        if budget is None:
            sources.pop(budget_id, None)
        else:
            sources[budget_id] = "api"
    return sources


def _readable_job(job_id: str) -> tuple[JobCost, JobItems]:
    """A job the caller may read, with its items (one Query); else 403/404 as in
    GET /jobs/{job_id}."""
    caller = _caller()
    config = runtime.current_settings().config
    denied = ForbiddenError(
        f"job {job_id!r} is not visible to team {caller.team} (not your team's job, or none)"
    )
    items = runtime.ledger().job_items(job_id)
    if items is None or not items.instances:
        if not caller.sees_everything:
            raise denied
        raise NotFoundError(f"no job {job_id!r}")
    cost = cost_of_items(items, config, runtime.clock().now())
    if not caller.may_read(cost.tags, config.access.team_tag_key):
        raise denied
    return cost, items


@app.get("/jobs/<job_id>/items")
def job_items(
    job_id: Annotated[str, Path(min_length=1, max_length=256)],
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    next_token: Annotated[str | None, Query(max_length=512)] = None,
) -> dict[str, Any]:
    """The job's line items: segments, checkpoints, interruptions, idle periods."""
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
    job_id: Annotated[str, Path(min_length=1, max_length=256)],
    points: Annotated[int, Query(ge=2, le=500)] = 100,
) -> dict[str, Any]:
    """Cumulative cost over time, evenly spaced from the job's start to now (for plotting)."""
    cost, items = _readable_job(job_id)
    now = runtime.clock().now()
    start = cost.started_at or now
    series = []
    for n in range(points):
        at = start + (now - start) * n / (points - 1)
        usd = spend_between(
            items.instances, items.checkpoints, start - timedelta(seconds=1), at, now
        )
        series.append({"at": iso(at), "total_usd": money(usd)})
    return {"job_id": job_id, "points": series}


@app.get("/jobs/<job_id>/estimate")
def estimate(
    job_id: Annotated[str, Path(min_length=1, max_length=256)],
    target_steps: Annotated[int, Query(ge=1, le=10**12)],
    utilization_drop: Annotated[Decimal, Query(ge=0, lt=1)] = Decimal("0.2"),
) -> dict[str, Any]:
    """The projected cost to reach ``target_steps``, as a range with its assumptions."""
    cost, _ = _readable_job(job_id)
    try:
        return estimate_to_finish(cost, target_steps, utilization_drop, runtime.clock().now())
    except ValueError as exc:
        raise BadRequestError(f"target_steps: job {job_id!r} {exc}") from exc


@app.get("/compare")
def compare(jobs: Annotated[str, Query(min_length=1, max_length=800)]) -> dict[str, Any]:
    """Jobs side by side (e.g. Trainium vs GPU for the same work), with what is not
    comparable said plainly."""
    job_ids = [j.strip() for j in jobs.split(",") if j.strip()]
    if not 2 <= len(job_ids) <= 5:
        raise BadRequestError("jobs: give 2 to 5 comma-separated job ids")
    readable = [_readable_job(job_id) for job_id in job_ids]
    return compare_jobs(
        [cost for cost, _ in readable],
        [items.instances for _, items in readable],
        runtime.current_settings().config.checkpoint.tokens_per_step_tag,
    )


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
        raise NotFoundError(
            f"no price known for {instance_type} in {region} ({platform}); it would be "
            "kept unpriced until one is configured or listed"
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
    stored = runtime.ledger().stored_budgets()  # one Query, used twice
    sources = _sources(stored)
    budgets = [
        b
        for b in effective_budgets(runtime.ledger(), config, stored)
        if caller.sees_everything
        or (b.scope.tag or {}).get(config.access.team_tag_key) == caller.team
    ]
    cache = JobCache(runtime.ledger())  # a job in several budgets is read once
    return {"budgets": [_budget_view(b, sources.get(b.budget_id, "api"), cache) for b in budgets]}


@app.get("/budgets/<budget_id>")
def get_budget(budget_id: Annotated[str, Path(pattern=BUDGET_ID)]) -> dict[str, Any]:
    _finance_or_admin("a single budget")
    config = runtime.current_settings().config
    for budget in effective_budgets(runtime.ledger(), config):
        if budget.budget_id == budget_id:
            return _budget_view(budget, _sources().get(budget_id, "api"))
    raise NotFoundError(f"no budget {budget_id!r}")


class BudgetBody(BaseModel):
    """A budget as PUT by a caller; the id comes from the path."""

    model_config = ConfigDict(extra="forbid")

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
    """Create or replace a budget; it is validated like a budget in CDK context."""
    caller = _finance_or_admin("setting budgets")
    config = runtime.current_settings().config
    _refuse_context_budget(budget_id, "changed")
    try:
        budget = Budget.model_validate({"budget_id": budget_id, **body.model_dump()})
        budget.check_tag_keys(config.known_tag_keys())
    except (ValidationError, ValueError) as exc:
        raise BadRequestError(str(exc).replace("\n", " ")) from exc
    before = runtime.ledger().stored_budgets().get(budget_id)
    _record_change(caller, budget_id, before, budget)
    return _budget_view(budget, "api")


@app.delete("/budgets/<budget_id>")
def delete_budget(budget_id: Annotated[str, Path(pattern=BUDGET_ID)]) -> dict[str, Any]:
    caller = _finance_or_admin("deleting budgets")
    _refuse_context_budget(budget_id, "deleted")
    before = runtime.ledger().stored_budgets().get(budget_id)
    if before is None:
        raise NotFoundError(f"no budget {budget_id!r}")
    _record_change(caller, budget_id, before, None)
    return {"budget_id": budget_id, "deleted": True}


@app.get("/budgets/<budget_id>/history")
def budget_history(budget_id: Annotated[str, Path(pattern=BUDGET_ID)]) -> dict[str, Any]:
    """Every change made to a budget through the API: who (the caller's ARN), when,
    and the budget before and after (null: absent / deleted)."""
    _finance_or_admin("a budget's history")
    changes = runtime.ledger().budget_history(budget_id)
    if not changes and budget_id not in _sources():
        raise NotFoundError(f"no budget {budget_id!r}")
    return {"budget_id": budget_id, "changes": changes}


def _refuse_context_budget(budget_id: str, verb: str) -> None:
    """Budgets from CDK context are managed where they are defined, not by the API."""
    if any(b.budget_id == budget_id for b in runtime.current_settings().config.budgets):
        raise ServiceError(
            409,
            f"budget {budget_id!r} is defined in CDK context (ledger.budgets) and cannot be "
            f"{verb} through the API; change it there and deploy",
        )


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
    runtime.ledger().put_budget_change(budget_id, after, change)


@app.get("/summaries/<day>")
def get_summary(day: Annotated[date, Path()]) -> dict[str, Any]:
    """The stored daily summary of one UTC day (written by the daily run or a backfill)."""
    _finance_or_admin("the daily summary")
    found = runtime.ledger().get_summaries([day])
    if day not in found:
        raise NotFoundError(f"no summary for {day.isoformat()} (yet)")
    return found[day]


@app.get("/reconciliations/<day>")
def get_reconciliation(day: Annotated[date, Path()]) -> dict[str, Any]:
    """A day's estimate against the bill (per job, with the accuracy), once reconciled."""
    _finance_or_admin("reconciliation")
    found = runtime.ledger().get_reconciliations([day])
    if day not in found:
        raise NotFoundError(f"{day.isoformat()} is not reconciled (yet, or not enabled)")
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
        raise BadRequestError("from: must not be after to")
    if (to - from_).days >= MAX_RANGE_DAYS:
        raise BadRequestError(f"from: the range may span at most {MAX_RANGE_DAYS} days")
    keys = runtime.current_settings().config.tracking.grouping_tag_keys
    if group_by is not None and group_by not in keys:
        raise BadRequestError(f"group_by: not a grouping tag key (one of {', '.join(keys)})")
    days = [from_ + timedelta(days=n) for n in range((to - from_).days + 1)]
    found = runtime.ledger().get_summaries(days)
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


@app.exception_handler(RequestValidationError)
def invalid_request(error: RequestValidationError) -> Response[dict[str, Any]]:
    """422 naming each bad parameter and why (Pydantic's message, never the input)."""
    detail = [
        {"loc": list(e["loc"]), "msg": str(e.get("msg", "")), "type": e["type"]}
        for e in error.errors()
    ]
    return Response(
        status_code=422,
        content_type=content_types.APPLICATION_JSON,
        body={"statusCode": 422, "detail": detail},
    )


def _unsupported_body(event: dict[str, Any]) -> dict[str, Any] | None:
    """A body that is not JSON is a 415 here, before the resolver tries to parse it."""
    if not event.get("body"):
        return None
    headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    content_type = str(headers.get("content-type", "application/json")).lower()
    if content_type.split(";")[0].strip() in ("application/json", ""):
        return None
    return {
        "statusCode": 415,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps(
            {
                "statusCode": 415,
                "message": f"Content-Type: send application/json, not {content_type}",
            }
        ),
        "isBase64Encoded": False,
    }


@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _unsupported_body(event) or app.resolve(event, context)
