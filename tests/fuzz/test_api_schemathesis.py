"""The job-cost API against its committed OpenAPI document (docs/openapi.json), fuzzed.

schemathesis generates requests (valid and invalid) for every operation in the
document; each is turned into an API Gateway REST proxy event by
``costtracker.local_api.proxy_event`` (the local adapter's own conversion) and
answered in-process by ``functions.job_cost_api.handler.handler`` over a moto
DynamoDB ledger seeded through the instance-state handler, as an admin and as a member
of one team. Checks: never a 5xx, no status the document does not declare, every
response matches its schema (4xx bodies too: the one error shape the document declares),
and every 4xx has that shape. Nothing is excluded.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.aws_events import ec2_state_event

schemathesis = pytest.importorskip(
    "schemathesis",
    reason="schemathesis is not installed (dev extra, not in requirements/dev.lock yet)",
)

import boto3  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402
from moto import mock_aws  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.core.failures import FailureGroup  # noqa: E402
from schemathesis.specs.openapi.checks import (  # noqa: E402
    response_schema_conformance,
    status_code_conformance,
)

from costtracker.local_api import proxy_event, with_local_admin  # noqa: E402
from shared.adapters import ledger_schema  # noqa: E402
from shared.app import runtime  # noqa: E402
from shared.config.access import AccessConfig, AccessRule  # noqa: E402
from shared.config.ledger import LedgerConfig, PriceOverrides  # noqa: E402
from shared.domain.clock import FixedClock  # noqa: E402

# FUZZ_EXAMPLES=300 for a longer search (CI runs 50 per operation).
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "50"))
OPENAPI = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"
T0 = datetime(2026, 11, 1, 10, tzinfo=UTC)
TABLE = "ledger-fuzz"
# A member of team vision (the local identity is the admin: costtracker.local_api).
VISION = "arn:aws:sts::123456789012:assumed-role/ml-vision/fuzz"
CONFIG = LedgerConfig(
    live_prices=False,
    prices=PriceOverrides(ec2={"trn1.32xlarge": Decimal("21.50")}),
    access=AccessConfig(rules=(AccessRule(arn_pattern=VISION, role="team", team="vision"),)),
)
# Who calls (tests only): the ARN API Gateway would put in the request context.
CALLER_HEADER = "X-Fuzz-Caller"


def one_error_shape(ctx: Any, response: Any, case: Any) -> bool | None:
    """Every 4xx: ``{"statusCode", "field", "message", "errors"}`` (shared.api.errors),
    bad input a 400 (never a 422), with a message that names the problem."""
    if not 400 <= response.status_code < 500:
        return None
    assert response.status_code != 422, response.text
    body = response.json()
    assert body["statusCode"] == response.status_code, body
    assert isinstance(body["message"], str) and body["message"], body
    assert body["field"] is None or isinstance(body["field"], str), body
    assert isinstance(body["errors"], list) and body["errors"], body
    return True


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    response_schema_conformance,
    one_error_shape,
]

schema = schemathesis.openapi.from_path(str(OPENAPI))


class _Context:
    function_name = "job_cost_api"
    memory_limit_in_mb = 256
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:job_cost_api"
    aws_request_id = "fuzz-api"


def _raw_target(environ: dict[str, Any]) -> str:
    """The request target as the client sent it (path still percent-encoded), which is what
    costtracker.local_api hands to proxy_event. Werkzeug's RAW_URI may omit a query string
    given separately, so the query always comes from QUERY_STRING."""
    raw = str(environ.get("RAW_URI") or environ.get("REQUEST_URI") or "")
    path = raw.split("?", 1)[0] or quote(
        environ.get("PATH_INFO", "").encode("latin-1"), safe="/:@!$&'()*+,;=-._~%"
    )
    query = environ.get("QUERY_STRING")
    return f"{path}?{query}" if query else path


def lambda_wsgi_app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """WSGI -> API Gateway REST proxy event -> the Lambda handler -> WSGI.

    A handler that raises is a Lambda function error, which API Gateway's proxy
    integration answers with 502 {"message": "Internal server error"}."""
    from functions.job_cost_api.handler import handler

    headers = {
        key[5:].replace("_", "-").title(): str(value)
        for key, value in environ.items()
        if key.startswith("HTTP_")
    }
    if environ.get("CONTENT_TYPE"):
        headers["Content-Type"] = environ["CONTENT_TYPE"]
    length = int(environ.get("CONTENT_LENGTH") or 0)
    payload = environ["wsgi.input"].read(length) if length else b""
    # API Gateway hands a non-binary body to Lambda as text.
    body = payload.decode("utf-8", errors="replace") if payload else None
    caller = headers.pop(CALLER_HEADER.title(), None)
    event = proxy_event(environ["REQUEST_METHOD"], _raw_target(environ), headers, body,
                        **({"user_arn": caller} if caller else {}))  # fmt: skip
    try:
        response = handler(event, _Context())
    except Exception as exc:  # the function failed: API Gateway answers 502 to the caller
        response = {
            "statusCode": 502,
            "body": json.dumps({"message": "Internal server error",
                                "x-fuzz-exception": f"{type(exc).__name__}: {exc}"}),
        }  # fmt: skip
    status = int(response["statusCode"])
    out_headers = {k: str(v) for k, v in (response.get("headers") or {}).items()}
    for key, values in (response.get("multiValueHeaders") or {}).items():
        out_headers.setdefault(key, ", ".join(str(v) for v in values))
    out_headers.setdefault("Content-Type", "application/json")
    reason = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else "Unknown"
    start_response(f"{status} {reason}", list(out_headers.items()))
    return [(response.get("body") or "").encode()]


def _send_state(ids: dict[str, str], clock: FixedClock, eid: str, seconds: int, state: str,
                job: str) -> None:  # fmt: skip
    from functions.instance_state.handler import handler

    at = T0 + timedelta(seconds=seconds)
    event = ec2_state_event(eid, ids[job], state, at)
    clock.advance_to(at)
    handler(event, _Context())


@pytest.fixture(scope="module")
def ledger_with_jobs() -> Iterator[dict[str, str]]:
    """A moto ledger with two jobs (one stopped, one running) and the API's env wired."""
    saved = {k: os.environ.get(k) for k in ("TABLE_NAME", "LEDGER_CONFIG")}
    with mock_aws():
        boto3.client("dynamodb", region_name="us-east-1").create_table(
            **ledger_schema.create_table_request(TABLE)
        )
        ec2 = boto3.client("ec2", region_name="us-east-1")
        ids = {}
        for job, team in (("llama", "nlp"), ("vit", "vision")):
            reservation = ec2.run_instances(
                ImageId="ami-12c6146b", MinCount=1, MaxCount=1, InstanceType="trn1.32xlarge",
                BlockDeviceMappings=[{"DeviceName": "/dev/sdf",
                                      "Ebs": {"VolumeSize": 100, "VolumeType": "gp3"}}],
                TagSpecifications=[{"ResourceType": "instance", "Tags": [
                    {"Key": "training-job", "Value": job}, {"Key": "team", "Value": team},
                    {"Key": "project", "Value": "foundation"}]}],
            )  # fmt: skip
            ids[job] = reservation["Instances"][0]["InstanceId"]
        os.environ["TABLE_NAME"] = TABLE
        os.environ["LEDGER_CONFIG"] = with_local_admin(CONFIG.model_dump_json())
        clock = FixedClock(T0)
        with runtime.override(clock):
            _send_state(ids, clock, "e1", 0, "running", "llama")
            _send_state(ids, clock, "e2", 60, "running", "vit")
            _send_state(ids, clock, "e3", 5400, "stopped", "llama")
            clock.advance_to(T0 + timedelta(hours=3))
            try:
                yield ids
            finally:
                runtime.reset()
                for key, value in saved.items():
                    if value is None:
                        os.environ.pop(key, None)
                    else:
                        os.environ[key] = value


def test_the_seeded_ledger_answers(ledger_with_jobs: dict[str, str]) -> None:
    """Sanity: the adapter reaches the handler and the seeded jobs exist."""
    from werkzeug.test import Client

    client = Client(lambda_wsgi_app)
    response = client.get("/jobs/llama")
    assert response.status_code == 200, response.text
    assert response.json["job_id"] == "llama"  # type: ignore[index]
    assert client.get("/jobs?team=vision").json["jobs"][0]["job_id"] == "vit"  # type: ignore[index]
    assert client.get("/jobs/nope").status_code == 404


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_never_5xx_and_matches_its_openapi_document(
    case: Any, ledger_with_jobs: dict[str, str]
) -> None:
    response = case.call(app=lambda_wsgi_app)
    case.validate_response(response, checks=CHECKS)


@schema.parametrize()
@settings(max_examples=max(10, EXAMPLES // 5), deadline=None,
          suppress_health_check=list(HealthCheck))  # fmt: skip
def test_api_as_a_team_member_never_5xx_and_matches_its_openapi_document(
    case: Any, ledger_with_jobs: dict[str, str]
) -> None:
    """A team member meets the 403s (another team's job, finance-only routes)."""
    response = case.call(app=lambda_wsgi_app, headers={CALLER_HEADER: VISION})
    case.validate_response(response, checks=CHECKS)


@pytest.mark.parametrize(
    ("path", "parameters", "status"),
    [
        ("/jobs/{job_id}", {"job_id": "vit"}, 200),
        ("/jobs/{job_id}", {"job_id": "llama"}, 403),  # team nlp's
        ("/budgets", {}, 200),
        ("/budgets/{budget_id}", {"budget_id": "b1"}, 403),
        ("/summaries/{day}", {"day": "2026-11-01"}, 403),
    ],
)
def test_a_team_members_answers_match_the_document(
    ledger_with_jobs: dict[str, str], path: str, parameters: dict[str, str], status: int
) -> None:
    case = schema[path]["GET"].Case(path_parameters=parameters)
    response = case.call(app=lambda_wsgi_app, headers={CALLER_HEADER: VISION})
    assert response.status_code == status, response.text
    case.validate_response(response, checks=CHECKS)


def test_the_schema_check_reads_4xx_bodies(ledger_with_jobs: dict[str, str]) -> None:
    """The check above can fail: a 400 whose body is not the documented shape fails it."""

    def wrong_shape(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        start_response("400 Bad Request", [("Content-Type", "application/json")])
        return [json.dumps({"statusCode": 400, "field": 7}).encode()]

    case = schema["/jobs"]["GET"].Case(query={"limit": 0})
    response = case.call(app=wrong_shape)
    with pytest.raises(FailureGroup) as failed:
        case.validate_response(response, checks=[response_schema_conformance])
    assert failed.group_contains(Exception, match=r'"message" is a required property')


@pytest.mark.parametrize(
    ("method", "content_type", "body"),
    [
        ("PUT", "multipart/form-data", b'{"amount_usd": "10", "scope": {"account": true}}'),
        ("PUT", "multipart/form-data; boundary=", b""),
        ("PUT", "multipart/form-data", b""),
        ("PUT", "text/plain", b"amount=10"),
    ],
)
def test_a_body_that_is_not_json_is_a_415(
    ledger_with_jobs: dict[str, str], method: str, content_type: str, body: bytes
) -> None:
    from werkzeug.test import Client

    response = Client(lambda_wsgi_app).open(
        "/budgets/b1", method=method, data=body, headers={"Content-Type": content_type}
    )
    assert response.status_code == 415, response.text
    assert response.json["field"] == "Content-Type"  # type: ignore[index]


def test_bad_input_is_a_400_in_the_documented_error_shape(
    ledger_with_jobs: dict[str, str],
) -> None:
    case = schema["/jobs"]["GET"].Case(query={"limit": 0})  # limit: ge=1
    response = case.call(app=lambda_wsgi_app)
    assert response.status_code == 400, response.text
    assert response.json()["field"] == "limit"
    case.validate_response(response, checks=[response_schema_conformance, one_error_shape])


@pytest.mark.parametrize(
    "token",
    [
        '{"offset": 1e999}',
        '{"offset": -1}',
        '{"offset": 1.5}',
        '{"offset": true}',
        '{"offset": 100000000000000000000}',
        '{"offset": "3"}',
        "[1]",
        "not json",
    ],
)
def test_a_forged_next_token_is_a_400(ledger_with_jobs: dict[str, str], token: str) -> None:
    import base64

    from werkzeug.test import Client

    forged = base64.urlsafe_b64encode(token.encode()).decode()
    response = Client(lambda_wsgi_app).get("/jobs", query_string={"next_token": forged})
    assert response.status_code == 400, response.text
    assert response.json["field"] == "next_token"  # type: ignore[index]
