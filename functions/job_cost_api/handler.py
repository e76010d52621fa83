"""The job-cost API (API Gateway REST, IAM auth): wiring only.

Bad parameters are answered 422 by the resolver's validation with the
parameter named; unknown jobs 404. Costs are accrued to the clock's now.
"""

from __future__ import annotations

import base64
import json
from datetime import date, timedelta
from typing import Annotated, Any, Literal

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import APIGatewayRestResolver
from aws_lambda_powertools.event_handler.exceptions import BadRequestError, NotFoundError
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import runtime
from shared.services.jobs import JobNotFound, get_job_cost, list_job_costs
from shared.views import job_detail, job_summary

logger = Logger(service="costtracker")
app = APIGatewayRestResolver(enable_validation=True)

MAX_RANGE_DAYS = 93


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
    """Jobs active between ``from`` and ``to`` (UTC days, default the last 7)."""
    now = runtime.clock().now()
    last = to or now.date()
    first = from_ or last - timedelta(days=6)
    if first > last:
        raise BadRequestError("from: must not be after to")
    if (last - first).days >= MAX_RANGE_DAYS:
        raise BadRequestError(f"from: the range may span at most {MAX_RANGE_DAYS} days")
    filters = {k: v for k, v in {"project": project, "team": team, "owner": owner}.items() if v}
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
    """One job's cost breakdown, accrued to now."""
    try:
        cost = get_job_cost(
            runtime.ledger(), runtime.current_settings().config, job_id, runtime.clock().now()
        )
    except JobNotFound as exc:
        raise NotFoundError(f"no job {job_id!r}") from exc
    return job_detail(cost)


@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
