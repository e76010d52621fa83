"""Time: the clock services ask (injected: tests and replay hand in their own), and the
integer clocks that turn accrual into exact arithmetic.

Money accrues per second (instances) or per second prorated over calendar
months (EBS, S3). Both become exact when measured on integer clocks:

- the seconds clock counts whole seconds since 2020-01-01 UTC;
- the month clock advances ``MONTH_UNITS`` per calendar month, and the same
  whole number of units per second within a month (every month length in days
  divides 377,580), so ``units / MONTH_UNITS`` is the exact month fraction.

A cost is then ``(rate x clock difference) / denominator`` with no rounding
until the very end.
"""

from __future__ import annotations

import calendar
from datetime import UTC, date, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class FixedClock:
    """A clock that moves only when told to (tests, the replay's simulated time)."""

    def __init__(self, at: datetime) -> None:
        self._at = at.astimezone(UTC)

    def now(self) -> datetime:
        return self._at

    def advance_to(self, at: datetime) -> None:
        """Move forward to ``at``; the simulated clock never runs backwards."""
        self._at = max(self._at, at.astimezone(UTC))


def utc(at: datetime) -> datetime:
    """An aware datetime in UTC (pydantic parses 'Z' into its own tzinfo)."""
    if at.tzinfo is None:
        raise ValueError(f"naive datetime {at!r}: event times carry a zone")
    return at.astimezone(UTC)


EPOCH = datetime(2020, 1, 1, tzinfo=UTC)
_LCM_DAYS = 377_580  # lcm(28, 29, 30, 31)
MONTH_UNITS = _LCM_DAYS * 86_400
SECONDS_PER_HOUR = 3600
_ONE_SECOND = timedelta(seconds=1)


def ceil_second(at: datetime) -> datetime:
    """``at`` rounded up to a whole second: a started second is billed whole."""
    at = at.astimezone(UTC)
    if at.microsecond:
        try:
            return at.replace(microsecond=0) + _ONE_SECOND
        except OverflowError:  # the last second of year 9999: nothing comes after it
            return at.replace(microsecond=0)
    return at


def seconds_clock(at: datetime) -> int:
    """Whole seconds since the epoch (``at`` rounded up to a whole second)."""
    delta = ceil_second(at) - EPOCH
    return delta.days * 86_400 + delta.seconds


def month_start(at: datetime) -> datetime:
    at = at.astimezone(UTC)
    return datetime(at.year, at.month, 1, tzinfo=UTC)


def next_month_start(at: datetime) -> datetime:
    days = calendar.monthrange(at.year, at.month)[1]
    return month_start(at) + timedelta(days=days)


def _days_in(year: int, month: int) -> int:
    """Days in a month (``calendar.monthrange(year, month)[1]``, without its weekday)."""
    return 29 if month == 2 and calendar.isleap(year) else _MONTH_DAYS[month]


_MONTH_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def month_clock(at: datetime) -> int:
    """Calendar-month clock: ``MONTH_UNITS`` per month, uniform within each month."""
    at = ceil_second(at)  # in UTC, on a whole second
    months = (at.year - EPOCH.year) * 12 + (at.month - EPOCH.month)
    # Whole seconds since the month's start.
    into = (at.day - 1) * 86_400 + at.hour * 3600 + at.minute * 60 + at.second
    return months * MONTH_UNITS + into * (_LCM_DAYS // _days_in(at.year, at.month))


def whole_seconds(start: datetime, end: datetime) -> int:
    """Elapsed whole seconds (0 when ``end`` is not after ``start``)."""
    return max(0, seconds_clock(end) - seconds_clock(start))


def day_start(at: datetime) -> datetime:
    at = at.astimezone(UTC)
    return datetime(at.year, at.month, at.day, tzinfo=UTC)


def day_bounds(day: date) -> tuple[datetime, datetime]:
    """A UTC day as (its start, the next day's start)."""
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    return start, start + timedelta(days=1)
