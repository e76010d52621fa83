"""The job-cost API's one error shape, for every 4xx it answers.

``{"statusCode": 400, "field": "limit", "message": "limit: must be at most 100",
"errors": [{"field": "limit", "message": "must be at most 100"}]}``: the parameter or
body field at fault (``null`` when none is), a message naming the problem and what to
do, never the raw input. Bad input is always 400 (never 422).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

# Where a validation error's location starts (Powertools' first loc item).
_LOCATIONS = ("query", "path", "body", "header", "cookie")


class ApiProblem(Exception):
    """A client error: raised by the routes, answered in the one shape."""

    def __init__(
        self,
        status: int,
        message: str,
        field: str | None = None,
        errors: Sequence[Mapping[str, str | None]] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.field = field
        self.errors = list(errors) if errors else [{"field": field, "message": message}]

    def body(self) -> dict[str, Any]:
        return {
            "statusCode": self.status,
            "field": self.field,
            "message": self.message,
            "errors": self.errors,
        }


def bad_input(field: str | None, message: str) -> ApiProblem:
    """A 400; the message is prefixed with the field, so that it reads on its own."""
    return ApiProblem(
        400,
        f"{field}: {message}" if field else message,
        field,
        [{"field": field, "message": message}],
    )


def forbidden(message: str) -> ApiProblem:
    return ApiProblem(403, message)


def not_found(field: str | None, message: str) -> ApiProblem:
    return ApiProblem(404, message, field)


def _field_of(loc: Sequence[Any]) -> str | None:
    parts = [str(p) for p in loc]
    if parts and parts[0] in _LOCATIONS:
        parts = parts[1:]
    return ".".join(parts) or None


def from_validation_errors(errors: Iterable[Mapping[str, Any]]) -> ApiProblem:
    """A 400 from pydantic's error list: each field and pydantic's message (which names
    the rule broken, not the input), the first one as the headline."""
    listed: list[dict[str, str | None]] = []
    for error in errors:
        field = _field_of(error.get("loc", ()))
        message = str(error.get("msg", "invalid value"))
        if message.startswith("Value error, "):
            message = message[len("Value error, ") :]
        if error.get("type") == "missing":
            message = "required"
        if error.get("type") == "json_invalid":
            field, message = "body", "not valid JSON: send a JSON object"
        listed.append({"field": field, "message": message})
    if not listed:
        listed = [{"field": None, "message": "invalid request"}]
    head = listed[0]
    more = f" (and {len(listed) - 1} more)" if len(listed) > 1 else ""
    headline = f"{head['field']}: {head['message']}" if head["field"] else str(head["message"])
    return ApiProblem(400, headline + more, head["field"], listed)


# The JSON schema of the shape, for the OpenAPI document (costtracker.openapi).
ERROR_SCHEMA: dict[str, Any] = {
    "title": "Error",
    "type": "object",
    "required": ["statusCode", "message"],
    "properties": {
        "statusCode": {"type": "integer", "minimum": 400, "maximum": 499},
        "field": {
            "anyOf": [{"type": "string"}, {"type": "null"}],
            "description": "the parameter or body field at fault, if one is",
        },
        "message": {"type": "string"},
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["message"],
                "properties": {
                    "field": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    "message": {"type": "string"},
                },
            },
        },
    },
}
