"""Print the job-cost API's OpenAPI document (committed as docs/openapi.json)."""

from __future__ import annotations

import json


def document() -> str:
    from functions.job_cost_api.handler import app

    schema = json.loads(
        app.get_openapi_json_schema(title="costtracker job-cost API", version="0.1.0")
    )
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    print(document(), end="")
