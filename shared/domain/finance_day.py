"""The finance day (cost rule 12): the calendar day of the team's own time zone, kept as
its UTC bounds.

Finance books by its own calendar: a day in ``Asia/Seoul`` is [15:00Z, 15:00Z next day),
a day in ``America/New_York`` is 24 hours but 23 or 25 across a daylight-saving change.
Daily summaries, ``day`` and ``month`` budget periods and the daily FOCUS export all ask
this one calendar for their bounds; costs split at those bounds as they would at UTC
midnight. FOCUS billing periods stay UTC calendar months (``utc_month_pieces``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import cache, cached_property
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from shared.config.zones import check_zone
from shared.domain.clock import next_month_start

if TYPE_CHECKING:
    from shared.config.ledger import LedgerConfig

DEFAULT_ZONE = "UTC"


@dataclass(frozen=True)
class FinanceCalendar:
    """Days and months of one IANA time zone, as UTC instants."""

    zone: str = DEFAULT_ZONE

    @cached_property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(check_zone(self.zone))

    @property
    def is_utc(self) -> bool:
        return self.zone in ("UTC", "Etc/UTC")

    def _start_of(self, day: date) -> datetime:
        """The first instant of a local day (where a zone skips its midnight, zoneinfo reads
        00:00 with the offset before the change: the instant the day's first hour begins)."""
        return datetime(day.year, day.month, day.day, tzinfo=self.tz).astimezone(UTC)

    def day_of(self, at: datetime) -> date:
        """The finance day ``at`` falls in."""
        return at.astimezone(self.tz).date()

    def bounds(self, day: date) -> tuple[datetime, datetime]:
        """A finance day as (its start, the next day's start), in UTC; 23, 24 or 25 hours."""
        return self._start_of(day), self._start_of(day + timedelta(days=1))

    def day_start(self, at: datetime) -> datetime:
        return self._start_of(self.day_of(at))

    def next_day_start(self, at: datetime) -> datetime:
        return self._start_of(self.day_of(at) + timedelta(days=1))

    def month_bounds(self, at: datetime) -> tuple[datetime, datetime, str]:
        """(start, end, "YYYY-MM") of the finance month ``at`` falls in."""
        local = at.astimezone(self.tz)
        first = date(local.year, local.month, 1)
        following = (first + timedelta(days=32)).replace(day=1)
        return self._start_of(first), self._start_of(following), f"{first:%Y-%m}"


UTC_CALENDAR = FinanceCalendar()


def utc_month_pieces(lo: datetime, hi: datetime) -> list[tuple[datetime, datetime]]:
    """[lo, hi) cut at each UTC month start inside it: a FOCUS row belongs to one UTC
    billing period, so a finance day that straddles a UTC month end is two rows."""
    pieces: list[tuple[datetime, datetime]] = []
    start = lo
    while start < hi:
        end = min(hi, next_month_start(start.astimezone(UTC)))
        pieces.append((start, end))
        start = end
    return pieces


def calendar_of(config: LedgerConfig) -> FinanceCalendar:
    """The finance day's calendar of a configuration (its ``finance_timezone``)."""
    return _calendar(config.finance_timezone)


@cache
def _calendar(zone: str) -> FinanceCalendar:
    return FinanceCalendar(zone)
