"""Crossing timers as SQS messages delayed to the second (DelaySeconds, 0 to 900): the
minute tick sends one when a predicted crossing is less than 15 minutes away, and the
timer function evaluates that budget when it arrives."""

from __future__ import annotations

import json
import math
from datetime import datetime
from typing import Any

MAX_DELAY_SECONDS = 900


def delay_seconds(moment: datetime, now: datetime) -> int:
    """Whole seconds from ``now`` to ``moment`` rounded up (never early), 0 to 900."""
    seconds = math.ceil((moment - now).total_seconds())
    return max(0, min(MAX_DELAY_SECONDS, seconds))


class SqsCrossingTimers:
    def __init__(self, sqs: Any, queue_url: str) -> None:
        self._sqs = sqs
        self._queue_url = queue_url

    def plan(self, budget_id: str, threshold: int, moment: datetime, now: datetime) -> None:
        body = {"budget_id": budget_id, "threshold": threshold, "moment": moment.isoformat()}
        self._sqs.send_message(
            QueueUrl=self._queue_url,
            MessageBody=json.dumps(body, sort_keys=True),
            DelaySeconds=delay_seconds(moment, now),
        )
