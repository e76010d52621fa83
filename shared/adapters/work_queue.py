"""The sweep's work queue (SQS): units go on it in batches of ten (SendMessageBatch's
most); the worker function takes them off (an SQS event source mapping)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

BATCH = 10


class Unit(Protocol):
    """A unit of work as the queue carries it (``shared.events.sweep_unit.SweepUnit``)."""

    @property
    def label(self) -> str: ...

    def model_dump_json(self) -> str: ...


class WorkQueueError(Exception):
    """SQS refused some units (their labels are named)."""


class SqsWorkQueue:
    def __init__(self, sqs: Any, queue_url: str) -> None:
        self._sqs = sqs
        self._url = queue_url
        self.sent = 0

    def send(self, units: Sequence[Unit]) -> None:
        for start in range(0, len(units), BATCH):
            batch = units[start : start + BATCH]
            response = self._sqs.send_message_batch(
                QueueUrl=self._url,
                Entries=[
                    {"Id": str(n), "MessageBody": unit.model_dump_json()}
                    for n, unit in enumerate(batch)
                ],
            )
            failed = response.get("Failed") or []
            if failed:
                labels = [batch[int(f["Id"])].label for f in failed]
                raise WorkQueueError(f"SQS refused {len(failed)} sweep units: {labels}")
            self.sent += len(batch)
