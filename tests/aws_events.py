"""EventBridge events shaped as AWS sends them (``tests/events/ec2-state-change.json``),
built for tests that drive a handler: one builder instead of a literal per test module."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

ACCOUNT = "123456789012"
REGION = "us-east-1"


def ec2_state_event(
    event_id: str,
    instance_id: str,
    state: str,
    at: datetime | str,
    *,
    account: str = ACCOUNT,
    region: str = REGION,
) -> dict[str, Any]:
    """An EC2 Instance State-change Notification (``at``: a UTC datetime or AWS's text)."""
    time = at if isinstance(at, str) else at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "version": "0",
        "id": event_id,
        "detail-type": "EC2 Instance State-change Notification",
        "source": "aws.ec2",
        "account": account,
        "time": time,
        "region": region,
        "resources": [],
        "detail": {"instance-id": instance_id, "state": state},
    }
