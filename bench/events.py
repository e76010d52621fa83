"""What the bench's scenario events share, apart from the scenario itself: the account
and region, the detail types, event ids, times both ways (written by the scenario, read
back by the replay and the CPU run), so that the alarm events (``bench.alarm_events``)
and the scenario (``bench.scenario``) build them alike, with the one event builder
(``costtracker.fakes.scenario_events``)."""

from __future__ import annotations

import random
from datetime import datetime
from typing import Any

from costtracker.fakes.scenario_events import ACCOUNT, REBALANCE, REGION, SPOT_WARNING
from costtracker.fakes.scenario_events import ALARM_STATE_CHANGE as ALARM
from costtracker.fakes.scenario_events import STATE_CHANGE as STATE

__all__ = ["ACCOUNT", "ALARM", "REBALANCE", "REGION", "SPOT_WARNING", "STATE", "Ids", "iso"]


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
