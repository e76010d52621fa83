"""Rates a span is priced with: a constant hourly rate, or a spot price series.

A spot series is the piecewise price history of one market (zone, type,
product); its cumulative integral ``I(t)`` (USD-seconds per hour) is a clock:
a span's cost is ``(I(end) - I(start)) / 3600``, however many price changes lie
between, so no record has to hold the steps.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal

from shared.domain.base import Frozen, Rate, RateSource
from shared.domain.clock import seconds_clock


class RatePin(Frozen):
    """How a span is priced. ``rate`` for a constant rate; ``series`` (with the
    integral at the span's start) for a spot series."""

    rate: Rate | None = None
    series: str | None = None
    series_start: Decimal | None = None  # I(start), frozen when the span opened
    source: RateSource
    checked_on: str  # ISO date
    region: str
    note: str = ""
    # Billed per second with no minimum (a Capacity Block's share of its fee).
    per_second: bool = False

    @classmethod
    def for_rate(cls, rate: Rate, per_second: bool = False) -> RatePin:
        """A constant rate's pin, carrying the rate's own provenance."""
        return cls(
            rate=rate,
            source=rate.source,
            checked_on=rate.checked_on.isoformat(),
            region=rate.region,
            note=rate.note,
            per_second=per_second,
        )

    @property
    def provenance(self) -> str:
        return f"{self.source.value}:{self.checked_on}"


class SeriesPoint(Frozen):
    at: datetime
    usd: Decimal  # hourly price from ``at`` on
    cumulative: Decimal  # I(at): integral from the series' first point, USD-seconds/hour


class SpotSeries(Frozen):
    """A price series: each price holds from its time until the next."""

    series_id: str
    points: tuple[SeriesPoint, ...]
    source: RateSource
    checked_on: str
    region: str

    @classmethod
    def build(
        cls,
        series_id: str,
        prices: Sequence[tuple[datetime, Decimal]],
        source: RateSource,
        checked_on: str,
        region: str,
    ) -> SpotSeries:
        ordered = sorted({at: usd for at, usd in prices if usd > 0}.items())
        points: list[SeriesPoint] = []
        cumulative = Decimal(0)
        for n, (at, usd) in enumerate(ordered):
            if n:
                prev = points[-1]
                cumulative += prev.usd * (seconds_clock(at) - seconds_clock(prev.at))
            points.append(SeriesPoint(at=at, usd=usd, cumulative=cumulative))
        return cls(
            series_id=series_id,
            points=tuple(points),
            source=source,
            checked_on=checked_on,
            region=region,
        )

    def _index(self, at: datetime) -> int:
        times = [p.at for p in self.points]
        return bisect.bisect_right(times, at) - 1

    def covers(self, at: datetime) -> bool:
        return bool(self.points) and self.points[0].at <= at

    def integral(self, at: datetime) -> Decimal:
        """I(at); the series must cover ``at``."""
        n = self._index(at)
        if n < 0:
            raise ValueError(f"series {self.series_id} has no price at {at.isoformat()}")
        point = self.points[n]
        return point.cumulative + point.usd * (seconds_clock(at) - seconds_clock(point.at))

    def rate_at(self, at: datetime) -> Decimal:
        n = self._index(at)
        if n < 0:
            raise ValueError(f"series {self.series_id} has no price at {at.isoformat()}")
        return self.points[n].usd

    def changes_between(self, start: datetime, end: datetime) -> int:
        return sum(1 for p in self.points if start < p.at < end)
