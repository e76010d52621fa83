"""What triggers a function (no CDK import): an EventBridge pattern, or a schedule
(declared as ``Every``; deployed and replayed as a ``Schedule``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo


@dataclass(frozen=True)
class EventRule:
    """An EventBridge rule's pattern (EventBridge JSON)."""

    pattern: Mapping[str, Any]
    # The stack narrows the pattern to the configured checkpoint buckets.
    checkpoint_buckets: bool = False


@dataclass(frozen=True)
class Queue:
    """An SQS queue the function consumes (messages delayed to the second: the crossing
    timers); the stack makes the queue and gives its URL to ``sender``."""

    description: str
    sender: str
    environment: str


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
    # A daily schedule on the finance day's boundary: read in ``finance_timezone``.
    finance_day: bool = False


@dataclass(frozen=True)
class Schedule:
    """A scheduled function's timetable: every ``every``, at ``offset`` past each
    multiple of it (UTC); a daily one with a ``timezone`` fires at ``offset`` past each
    local midnight of that zone (EventBridge Scheduler's ``ScheduleExpressionTimezone``),
    so across a daylight-saving change it stays on the local clock."""

    function: str
    every: timedelta
    offset: timedelta = timedelta(0)
    description: str = ""
    in_replay: bool = True
    timezone: str = "UTC"

    @property
    def local(self) -> bool:
        """Fires on a zone's local clock (a daily schedule outside UTC)."""
        return self.every == timedelta(days=1) and self.timezone not in ("UTC", "Etc/UTC")

    def scheduler_expression(self) -> str:
        """The EventBridge Scheduler cron expression (read in ``timezone``)."""
        fields = self.cron()
        return f"cron({fields['minute']} {fields['hour']} * * ? *)"

    def _local_firing(self, day: date) -> datetime:
        tz = ZoneInfo(self.timezone)
        return (datetime.combine(day, time(0), tzinfo=tz) + self.offset).astimezone(UTC)

    def _local_index(self, at: datetime) -> int:
        """How many local firings there are up to ``at`` (from an arbitrary origin)."""
        day = at.astimezone(ZoneInfo(self.timezone)).date()
        return day.toordinal() - (1 if at < self._local_firing(day) else 0)

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
        if self.local:
            day = after.astimezone(ZoneInfo(self.timezone)).date()
            at = self._local_firing(day)
            while at <= after:
                day += timedelta(days=1)
                at = self._local_firing(day)
            return at
        period = self.every.total_seconds()
        epoch = datetime(1970, 1, 1, tzinfo=after.tzinfo)
        k = int((after - epoch - self.offset).total_seconds() // period) + 1
        return epoch + self.offset + timedelta(seconds=k * period)

    def count_between(self, after: datetime, until: datetime) -> int:
        """How many times this schedule fires in (after, until]."""
        if until <= after:
            return 0
        if self.local:
            return max(0, self._local_index(until) - self._local_index(after))
        period = self.every.total_seconds()
        epoch = datetime(1970, 1, 1, tzinfo=after.tzinfo)

        def index(at: datetime) -> int:
            return int((at - epoch - self.offset).total_seconds() // period)

        return max(0, index(until) - index(after))
