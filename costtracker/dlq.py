"""Redrive a function's dead-letter queue: each parked event is invoked again, then
deleted. Safe to repeat: every handler is idempotent (an event applied before its
failure is a duplicate now)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class RedriveResult:
    redriven: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)


def redrive(
    sqs: Any, queue_url: str, invoke: Callable[[dict[str, Any]], None], limit: int = 1000
) -> RedriveResult:
    """Invoke each message's event (a message that fails again stays in the queue)."""
    result = RedriveResult()
    seen = 0
    while seen < limit:
        messages = sqs.receive_message(
            QueueUrl=queue_url,
            MaxNumberOfMessages=min(10, limit - seen),
            WaitTimeSeconds=0,
            VisibilityTimeout=60,
        ).get("Messages", [])
        if not messages:
            break
        for message in messages:
            seen += 1
            try:
                event = json.loads(message["Body"])
                invoke(event)
            except Exception as exc:  # it stays parked, visible again after the timeout
                result.failed[message["MessageId"]] = str(exc)
                continue
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
            result.redriven.append(str(event.get("id", message["MessageId"])))
    return result


def lambda_invoker(lambda_client: Any, function_name: str) -> Callable[[dict[str, Any]], None]:
    """Invoke the deployed function asynchronously, as EventBridge did."""

    def invoke(event: dict[str, Any]) -> None:
        lambda_client.invoke(
            FunctionName=function_name, InvocationType="Event", Payload=json.dumps(event)
        )

    return invoke
