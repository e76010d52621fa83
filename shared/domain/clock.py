"""Time is injected: services ask a clock, tests and replay hand in their own."""

from __future__ import annotations

from datetime import UTC, datetime
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
