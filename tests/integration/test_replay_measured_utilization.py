"""Rule 10 through the replay and the API: the scenario's ``metrics`` go into the
emulator's CloudWatch (moto's PutMetricData), the handlers read them with GetMetricData
and the job document, ``/jobs/{id}``, ``/compare`` and the day's summary carry the
figures worked by hand in ``tests/scenarios/make_measured_utilization.py``."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

from costtracker.lambda_context import FakeLambdaContext
from costtracker.local_api import LOCAL_CALLER_ARN, with_local_admin
from shared.config.ledger import LedgerConfig

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "measured_utilization.json"
PER_ACCELERATOR_HOUR = (
    f"{(Decimal('21.50') * 4 + Decimal('1.34375') * 2 + Decimal('0.34')) / 66:.9f}"
)


def get(path: str, query: dict[str, str] | None = None) -> dict[str, Any]:
    from functions.job_cost_api.handler import handler

    event = {
        "resource": path, "path": path, "httpMethod": "GET", "headers": {},
        "multiValueHeaders": {}, "queryStringParameters": query,
        "multiValueQueryStringParameters": {k: [v] for k, v in (query or {}).items()} or None,
        "pathParameters": None, "stageVariables": None, "body": None, "isBase64Encoded": False,
        "requestContext": {"requestId": "r", "stage": "prod", "httpMethod": "GET", "path": path,
                           "resourcePath": path, "identity": {"userArn": LOCAL_CALLER_ARN}},
    }  # fmt: skip
    response = handler(event, FakeLambdaContext("test"))
    assert response["statusCode"] == 200, response["body"]
    body: dict[str, Any] = json.loads(response["body"])
    return body


def test_replay_and_api_carry_measured_utilization_and_usd_per_accelerator_hour() -> None:
    from costtracker.progress import Progress
    from costtracker.replay import replay_session, report
    from costtracker.scenario import Scenario

    scenario = Scenario.model_validate(json.loads(SCENARIO.read_text()))
    base = LedgerConfig.model_validate_json(with_local_admin(LedgerConfig().model_dump_json()))
    with replay_session(scenario, base) as replayer:
        replayer.run(Progress(len(scenario.events), "replay", enabled=False))
        document = report(replayer)
        jobs = {j["job_id"]: j for j in document["jobs"]}
        detail = get("/jobs/measured-llama")
        compare = get("/compare", {"jobs": "measured-llama,unmeasured-gpu"})

    measured = jobs["measured-llama"]
    assert measured["accelerator_seconds"] == 237_600
    assert measured["utilization"] == "0.700000"
    assert measured["utilization_measured_share"] == "0.250000"
    assert Decimal(measured["effective_accelerator_hours"]) == Decimal("16.8")
    assert measured["usd_per_accelerator_hour"] == PER_ACCELERATOR_HOUR
    unmeasured = jobs["unmeasured-gpu"]
    assert unmeasured["accelerator_seconds"] == 3600 * 8
    assert (unmeasured["utilization"], unmeasured["effective_accelerator_hours"]) == (None, None)
    assert unmeasured["usd_per_accelerator_hour"] == f"{Decimal('55.04') / 8:.9f}"

    for key in ("utilization", "utilization_measured_share", "usd_per_accelerator_hour"):
        assert detail[key] == measured[key]
    rows = {r["job_id"]: r for r in compare["jobs"]}
    assert rows["measured-llama"]["utilization"] == "0.700000"
    assert rows["measured-llama"]["usd_per_accelerator_hour"] == PER_ACCELERATOR_HOUR
    assert rows["unmeasured-gpu"]["utilization"] is None

    (day,) = document["daily_summaries"]
    assert day["accelerator_seconds"] == 237_600 + 28_800
    assert day["utilization"] == "0.700000"  # the GPU job was not measured: not in the mean
    assert day["utilization_measured_share"] == f"{Decimal(5400) / Decimal(25200):.6f}"
