"""Opt-in: against a deployed stack. Skipped, with a message, without AWS credentials.

Needs COSTTRACKER_STACK (stack name) and COSTTRACKER_E2E_INSTANCE_ID (a tagged,
running instance in the stack's region). Invokes the deployed state-change
function with a real-shaped event and reads the job back through the IAM-signed
API.
"""

from __future__ import annotations

import json
import os
import urllib.request
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.aws_events import ec2_state_event

pytestmark = pytest.mark.e2e


def _credentials() -> Any:
    import boto3

    return boto3.session.Session().get_credentials()


@pytest.fixture(scope="module")
def stack() -> dict[str, str]:
    if os.environ.get("AWS_ENDPOINT_URL"):
        pytest.skip("AWS_ENDPOINT_URL points at an emulator; e2e needs real AWS")
    if _credentials() is None:
        pytest.skip("no AWS credentials: the e2e suite runs only against a deployed stack")
    name = os.environ.get("COSTTRACKER_STACK")
    if not name:
        pytest.skip("set COSTTRACKER_STACK to the deployed stack's name")
    import boto3

    outputs = (
        boto3.client("cloudformation")
        .describe_stacks(StackName=name)["Stacks"][0]
        .get("Outputs", [])
    )
    return {o["OutputKey"]: o["OutputValue"] for o in outputs}


def _output(stack: dict[str, str], fragment: str) -> str:
    for key, value in stack.items():
        if fragment.lower() in key.lower():
            return value
    pytest.skip(f"the stack has no output containing {fragment!r}")


def _signed_get(url: str) -> tuple[int, dict[str, Any]]:
    import boto3
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest

    region = boto3.session.Session().region_name or "us-east-1"
    request = AWSRequest(method="GET", url=url)
    SigV4Auth(_credentials(), "execute-api", region).add_auth(request)
    prepared = urllib.request.Request(url, headers=dict(request.headers.items()))
    try:
        with urllib.request.urlopen(prepared, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def test_state_event_reaches_the_ledger_and_the_api(stack: dict[str, str]) -> None:
    import boto3

    instance_id = os.environ.get("COSTTRACKER_E2E_INSTANCE_ID")
    if not instance_id:
        pytest.skip("set COSTTRACKER_E2E_INSTANCE_ID to a tagged instance to track")
    function = _output(stack, "InstanceStateFunctionName")
    region = boto3.session.Session().region_name
    event = ec2_state_event(
        str(uuid.uuid4()),
        instance_id,
        "running",
        datetime.now(UTC),
        account=boto3.client("sts").get_caller_identity()["Account"],
        region=region,
    )
    result = boto3.client("lambda").invoke(FunctionName=function, Payload=json.dumps(event))
    payload = json.loads(result["Payload"].read())
    assert "FunctionError" not in result, payload
    assert payload["result"] in {"applied", "duplicate", "untracked"}
    if payload["result"] == "untracked":
        pytest.skip(f"{instance_id} is not tracked (no job tag, not an accelerator family)")
    api = _output(stack, "ApiUrl").rstrip("/")
    status, body = _signed_get(f"{api}/jobs/{payload['job_id']}")
    assert status == 200, body
    assert body["job_id"] == payload["job_id"]
    assert body["status"] in {"running", "stopped", "complete", "interrupted"}


def test_unsigned_api_request_is_refused(stack: dict[str, str]) -> None:
    api = _output(stack, "ApiUrl").rstrip("/")
    try:
        urllib.request.urlopen(f"{api}/jobs", timeout=30)
    except urllib.error.HTTPError as error:
        assert error.code == 403
    else:
        pytest.fail("an unsigned request was answered")
