"""The EventBridge envelope of every scenario event, apart from the scenario itself: the
account and region, the detail types, event ids, times both ways (written by the
scenario, read back by the replay and the CPU run), so that the alarm events
(``bench.alarm_events``) and the scenario (``bench.scenario``) build them alike."""

from __future__ import annotations

import random
from datetime import datetime
from typing import Any

ACCOUNT, REGION = "123456789012", "us-east-1"
STATE = "EC2 Instance State-change Notification"
SPOT_WARNING = "EC2 Spot Instance Interruption Warning"
REBALANCE = "EC2 Instance Rebalance Recommendation"
ALARM = "CloudWatch Alarm State Change"


def iso(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def event_time(event: dict[str, Any]) -> datetime:
    """An event's ``time`` as an aware UTC datetime."""
    from shared.domain.clock import utc

    return utc(datetime.fromisoformat(str(event["time"]).replace("Z", "+00:00")))


class Ids:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def event(self) -> str:
        h = f"{self.rng.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def envelope(
    eid: str,
    at: datetime,
    source: str,
    detail_type: str,
    detail: dict[str, Any],
    resources: list[str] | None = None,
) -> dict[str, Any]:
    return {
        "version": "0",
        "id": eid,
        "detail-type": detail_type,
        "source": source,
        "account": ACCOUNT,
        "time": iso(at),
        "region": REGION,
        "resources": resources or [],
        "detail": detail,
    }


def instance_arn(iid: str) -> list[str]:
    return [f"arn:aws:ec2:{REGION}:{ACCOUNT}:instance/{iid}"]
