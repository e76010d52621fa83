"""Parameters shared by the routes: a job id in a path (percent-decoded by validation),
day ranges and the paging token."""

from __future__ import annotations

import base64
import json
from datetime import date, timedelta
from typing import Annotated
from urllib.parse import unquote

from aws_lambda_powertools.event_handler.openapi.params import Path
from pydantic import AfterValidator

from shared.api.errors import bad_input

MAX_RANGE_DAYS = 93
# GET /change: a period against the same period a year before, at most.
MAX_CHANGE_SPAN_DAYS = 366 + MAX_RANGE_DAYS
MAX_JOB_ID = 256
# A page offset beyond this is not one the API issued (no listing is this long).
MAX_OFFSET = 1_000_000


def decode_job_id(raw: str) -> str:
    """The job id of a path segment (API Gateway REST passes it percent-encoded):
    percent-decoded (UTF-8), of a sane length."""
    try:
        job_id = unquote(raw, errors="strict") if "%" in raw else raw
    except UnicodeDecodeError as exc:
        raise ValueError("not percent-encoded UTF-8") from exc
    if not job_id.strip() or len(job_id) > MAX_JOB_ID:
        raise ValueError(f"give a job id of 1 to {MAX_JOB_ID} characters")
    return job_id


# A job id in a path: the route receives it decoded (a bad one is a 400 naming job_id).
JobIdInPath = Annotated[
    str,
    Path(
        min_length=1,
        max_length=3 * 4 * MAX_JOB_ID,
        description=f"the job id, percent-encoded (at most {MAX_JOB_ID} characters decoded)",
    ),
    AfterValidator(decode_job_id),
]


def check_range(first: date, last: date, field: str, after: str = "to") -> None:
    """A range of UTC days: in order and at most MAX_RANGE_DAYS long."""
    if first > last:
        raise bad_input(field, f"must not be after {after}")
    if (last - first).days >= MAX_RANGE_DAYS:
        raise bad_input(field, f"the range may span at most {MAX_RANGE_DAYS} days")


def decode_token(token: str | None) -> int:
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


def token_after(offset: int, limit: int, total: int) -> str | None:
    """The token of the page after [offset, offset + limit), None on the last page."""
    if offset + limit >= total:
        return None
    return base64.urlsafe_b64encode(json.dumps({"offset": offset + limit}).encode()).decode()


def week_before(last: date) -> date:
    """The first of the 7 days ending ``last`` (the default range), within the calendar."""
    return last - timedelta(days=6) if last > date.min + timedelta(days=6) else date.min
