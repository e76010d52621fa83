"""What triggers a function (no CDK import): an EventBridge pattern, or a schedule
(declared as ``Every``; deployed and replayed as a ``Schedule``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any


@dataclass(frozen=True)
class EventRule:
    """An EventBridge rule's pattern (EventBridge JSON)."""

    pattern: Mapping[str, Any]
    # The stack narrows the pattern to the configured checkpoint buckets.
    checkpoint_buckets: bool = False


@dataclass(frozen=True)
class Every:
    """A schedule: every ``every``, at ``offset`` past each multiple of it (UTC)."""

    every: timedelta
    offset: timedelta = timedelta(0)
    description: str = ""
    # False for work that reads the live account (a replay's events are complete).
    in_replay: bool = True
    # The offset is the configured ``ledger.summary.time_utc`` instead.
    at_summary_time: bool = False


@dataclass(frozen=True)
class Schedule:
    """A scheduled function's timetable: every ``every``, at ``offset`` past each
    multiple of it (UTC)."""

    function: str
    every: timedelta
    offset: timedelta = timedelta(0)
    description: str = ""
    in_replay: bool = True

    def cron(self) -> dict[str, str]:
        """The EventBridge cron fields (minute, hour) of this schedule."""
        minute = str(int(self.offset.total_seconds() // 60) % 60)
        if self.every == timedelta(minutes=1):
            return {"minute": "*", "hour": "*"}
        if self.every == timedelta(hours=1):
            return {"minute": minute, "hour": "*"}
        if self.every == timedelta(days=1):
            return {"minute": minute, "hour": str(int(self.offset.total_seconds() // 3600))}
        raise ValueError(f"unsupported cadence {self.every}")

    def next_after(self, after: datetime) -> datetime:
        """The first time this schedule fires after ``after``."""
        period = self.every.total_seconds()
        epoch = datetime(1970, 1, 1, tzinfo=after.tzinfo)
        k = int((after - epoch - self.offset).total_seconds() // period) + 1
        return epoch + self.offset + timedelta(seconds=k * period)

    def count_between(self, after: datetime, until: datetime) -> int:
        """How many times this schedule fires in (after, until]."""
        if until <= after:
            return 0
        period = self.every.total_seconds()
        epoch = datetime(1970, 1, 1, tzinfo=after.tzinfo)

        def index(at: datetime) -> int:
            return int((at - epoch - self.offset).total_seconds() // period)

        return max(0, index(until) - index(after))
