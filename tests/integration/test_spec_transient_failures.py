"""Throttling and 5xx from DynamoDB, EC2 and SNS: retries succeed without double counting;
a failure that does not go away fails the invocation (Lambda then retries twice and
parks the original event in the function's dead-letter queue)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from moto import mock_aws

from costtracker.lambda_context import FakeLambdaContext
from shared.app import runtime
from shared.config.ledger import LedgerConfig
from shared.domain.clock import FixedClock
from tests.aws_events import ec2_state_event
from tests.support import moto_instance, moto_ledger

T0 = datetime(2026, 11, 1, 10, tzinfo=UTC)
TABLE = "ledger-faults"


class Faults:
    """Answers the first ``times`` matching requests with an error, then lets them through."""

    def __init__(self, status: int, code: str, times: int) -> None:
        self.status, self.code, self.left = status, code, times
        self.injected = 0

    def __call__(self, request: Any, **kwargs: Any) -> AWSResponse | None:
        if self.left <= 0:
            return None
        self.left -= 1
        self.injected += 1
        body = (
            f'{{"__type": "{self.code}", "message": "injected"}}'.encode()
            if "dynamodb" in request.url
            else f"<Response><Errors><Error><Code>{self.code}</Code><Message>injected"
            f"</Message></Error></Errors></Response>".encode()
        )
        return AWSResponse(request.url, self.status, {}, _Raw(body))


class _Raw:
    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **kwargs: Any) -> Iterator[bytes]:
        yield self._body


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with mock_aws():
        moto_ledger(
            monkeypatch,
            TABLE,
            LedgerConfig.model_validate(
                {"live_prices": False, "prices": {"ec2": {"trn1.32xlarge": "36"}}}
            ).model_dump_json(),
        )
        iid = moto_instance(
            boto3.client("ec2", region_name="us-east-1"), "trn1.32xlarge", {"training-job": "llama"}
        )
        with runtime.override(FixedClock(T0)):
            yield iid


def deliver(iid: str, eid: str, minutes: int, state: str) -> dict[str, Any]:
    from functions.instance_state.handler import handler

    event = ec2_state_event(eid, iid, state, T0 + timedelta(minutes=minutes))
    return handler(event, FakeLambdaContext("test"))


def cost_now(minutes: int) -> Decimal:
    from shared.services.job_view import get_job_cost

    now = T0 + timedelta(minutes=minutes)
    return get_job_cost(runtime.ledger_deps(), "llama", now).instance_usd


@pytest.mark.parametrize(
    ("service", "operation", "status", "code"),
    [
        ("dynamodb", "TransactWriteItems", 400, "ProvisionedThroughputExceededException"),
        ("dynamodb", "TransactWriteItems", 500, "InternalServerError"),
        ("dynamodb", "GetItem", 400, "ThrottlingException"),
        ("ec2", "DescribeInstances", 503, "RequestLimitExceeded"),
    ],
)
def test_transient_errors_are_retried_and_nothing_counts_twice(
    aws: str, service: str, operation: str, status: int, code: str
) -> None:
    faults = Faults(status, code, times=2)
    runtime.client(service).meta.events.register(f"before-send.{service}.{operation}", faults)
    deliver(aws, "run", 0, "running")
    deliver(aws, "stop", 60, "stopped")
    deliver(aws, "run", 0, "running")  # the retried delivery of an event: a duplicate
    assert faults.injected == 2
    assert cost_now(120) == Decimal(36)  # one hour at $36/h, once


def test_a_persistent_failure_fails_the_invocation_for_the_dlq(aws: str) -> None:
    # Injected at before-send, the error replaces the response after the emulator has
    # applied the write: the harshest case, a write that landed but whose answer was lost.
    faults = Faults(500, "InternalServerError", times=100)
    hook = "before-send.dynamodb.TransactWriteItems"
    runtime.client("dynamodb").meta.events.register(hook, faults)
    with pytest.raises(Exception, match="InternalServerError"):
        deliver(aws, "run", 0, "running")
    runtime.client("dynamodb").meta.events.unregister(hook, faults)
    # Lambda's retry (or a redrive from the DLQ) of the same event counts it once.
    assert deliver(aws, "run", 0, "running")["result"] in {"applied", "duplicate"}
    assert deliver(aws, "run", 0, "running")["result"] == "duplicate"
    deliver(aws, "stop", 30, "stopped")
    assert cost_now(60) == Decimal(18)  # 30 minutes at $36/h, once


def test_sns_throttling_is_retried_and_the_alert_is_sent_once(
    aws: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shared.adapters.notify import Alert

    sns = boto3.client("sns", region_name="us-east-1")
    topic = sns.create_topic(Name="admin")["TopicArn"]
    monkeypatch.setenv("ADMIN_TOPIC_ARN", topic)
    runtime.reset()
    faults = Faults(400, "Throttling", times=2)
    runtime.client("sns").meta.events.register("before-send.sns.Publish", faults)
    runtime.notifier().send(
        Alert("admin", "missing_price", "subject", "message", alert_id="missing_price:x")
    )
    assert faults.injected == 2


def test_dlq_redrive_replays_parked_events_idempotently(aws: str) -> None:
    import json

    from costtracker.dlq import redrive
    from functions.instance_state.handler import handler

    sqs = boto3.client("sqs", region_name="us-east-1")
    queue = sqs.create_queue(QueueName="instance-state-dlq")["QueueUrl"]
    event = ec2_state_event("parked", aws, "running", "2026-11-01T10:00:00Z")
    for _ in range(2):  # parked twice (two failed deliveries of one event)
        sqs.send_message(QueueUrl=queue, MessageBody=json.dumps(event))
    sqs.send_message(QueueUrl=queue, MessageBody="not json")
    result = redrive(sqs, queue, lambda e: handler(e, FakeLambdaContext("test")))
    assert result.redriven == ["parked", "parked"] and len(result.failed) == 1
    deliver(aws, "stop", 10, "stopped")
    assert cost_now(60) == Decimal(6)  # 10 minutes at $36/h: counted once
