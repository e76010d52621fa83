"""The job-cost API's OpenAPI document (committed as docs/openapi.json, served by the
local API at /openapi.json).

Powertools generates the routes, their parameters and their responses (the routes'
return annotations: ``shared.api.models``); this adds what it cannot know:
every 4xx a route answers, all in the one error shape of ``shared.api.errors`` (bad
input is a 400, never a 422, so Powertools' 422 entries are replaced; every route may
answer 403, as access fails closed).
"""

from __future__ import annotations

import json
from typing import Any

from shared.api.errors import ERROR_SCHEMA

TITLE = "costtracker job-cost API"
VERSION = "0.1.0"
_ERROR_REF = {"$ref": "#/components/schemas/Error"}
_DESCRIPTIONS = {
    "400": "Bad input: the parameter or field at fault and why (never the input itself)",
    "403": "The caller may not see this: no ledger.access rule matches the caller (with no "
    "rules, the API is closed to every caller), a team member asking for another team's job or "
    "spend, or finance-only views",
    "404": "No such job, budget, day or price",
    "409": "The budget is defined in CDK context (ledger.budgets): change it there and deploy",
    "415": "The body is not application/json",
}


def _statuses(path: str, method: str, operation: dict[str, Any]) -> list[str]:
    """The client errors an operation answers."""
    out = ["403"]  # every route resolves the caller
    if operation.get("parameters") or operation.get("requestBody"):
        out.append("400")
    if "{" in path or path in ("/prices", "/compare", "/change"):  # a job, price or day
        out.append("404")
    if method in ("put", "post", "patch"):
        out.append("415")
    if path == "/budgets/{budget_id}" and method in ("put", "delete"):  # a context budget
        out.append("409")
    return sorted(out)


def schema() -> dict[str, Any]:
    from functions.job_cost_api.handler import app

    raw: dict[str, Any] = json.loads(app.get_openapi_json_schema(title=TITLE, version=VERSION))
    for path, operations in raw.get("paths", {}).items():
        for method, operation in operations.items():
            responses = operation.setdefault("responses", {})
            responses.pop("422", None)
            for status in _statuses(path, method, operation):
                responses[status] = {
                    "description": _DESCRIPTIONS[status],
                    "content": {"application/json": {"schema": _ERROR_REF}},
                }
    schemas = raw.setdefault("components", {}).setdefault("schemas", {})
    for name in ("HTTPValidationError", "ValidationError", "ResponseValidationError"):
        schemas.pop(name, None)
    schemas["Error"] = ERROR_SCHEMA
    return raw


def document() -> str:
    return json.dumps(schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    print(document(), end="")
