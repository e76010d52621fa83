"""Accelerator-hours and measured utilization (cost rule 10), warm-up (rule 11).

Utilization is a measurement, never a default: a datapoint at ``t`` of period ``p``
covers [t, t+p) inside the instance's running time; its value is a percent (divided by
100 here). Per-device series (GPUs, NeuronCores) are averaged per moment first. What an
hour of an instance measured is kept as two numbers, the sum of value x covered seconds
and the covered seconds, so hours add up and a job's mean is exact. No covered second:
``None`` ("not measured"), never 100 % and never 0 %.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from shared.domain.clock import SECONDS_PER_HOUR, seconds_clock, whole_seconds

HOUR = timedelta(hours=1)

Spans = Sequence[tuple[datetime, datetime]]


@dataclass(frozen=True)
class Point:
    """One datapoint: its start and its value as a fraction (87.5 % is 0.875)."""

    at: datetime
    value: Decimal


_NONE, _ALL = Decimal(0), Decimal(1)


def fraction(percent: float | Decimal | str) -> Decimal:
    """A CloudWatch percent as a fraction, clamped into [0, 1] (agents report 100.4)."""
    value = Decimal(str(percent)) / 100
    return min(max(value, _NONE), _ALL)


def device_mean(series: Iterable[Sequence[Point]]) -> list[Point]:
    """One instance-level series from per-device ones: the mean at each moment over the
    devices that reported then."""
    at: dict[datetime, list[Decimal]] = {}
    for points in series:
        for point in points:
            at.setdefault(point.at, []).append(point.value)
    return [Point(t, sum(v, Decimal(0)) / len(v)) for t, v in sorted(at.items())]


@dataclass(frozen=True)
class Measured:
    """Sum of value x covered seconds, and the covered seconds (an hour, or a sum)."""

    weighted: Decimal = Decimal(0)
    covered_seconds: int = 0

    def __add__(self, other: Measured) -> Measured:
        return Measured(
            self.weighted + other.weighted, self.covered_seconds + other.covered_seconds
        )

    @property
    def utilization(self) -> Decimal | None:
        return self.weighted / self.covered_seconds if self.covered_seconds else None


def measure(
    points: Sequence[Point], period_seconds: int, running: Spans, hour: datetime
) -> Measured:
    """What the points measured of ``hour``: each covers [t, t+period) inside the running
    spans and the hour (a point is counted once, where it lies).

    Worked on the whole-second clock (``seconds_clock``, each moment once): it only
    rounds up and keeps order, so it commutes with max and min, and a point's end is its
    start plus the period; the seconds are those of ``whole_seconds`` on the datetimes."""
    if not points:  # an hour without a datapoint (most of a scenario's): nothing covered
        return Measured()
    end = hour + HOUR
    first, last = seconds_clock(hour), seconds_clock(end)
    inside = [
        (max(seconds_clock(s), first), min(seconds_clock(e), last))
        for s, e in running
        if s < end and e > hour
    ]
    weighted, covered = Decimal(0), 0
    for point in sorted(points, key=lambda p: p.at):
        at = seconds_clock(point.at)
        lo, hi = max(at, first), min(at + period_seconds, last)
        seconds = 0
        for s, e in inside:
            seconds += max(0, min(hi, e) - max(lo, s))
        weighted += point.value * seconds
        covered += seconds
    return Measured(weighted, covered)


def hours_run(running: Spans, lo: datetime, hi: datetime) -> list[datetime]:
    """The whole UTC hours in [lo, hi) in which the instance ran."""
    first = lo.replace(minute=0, second=0, microsecond=0)
    # Only a span that reaches into [first, hi + 1 h) can touch one of those hours.
    near = [(s, e) for s, e in running if e > first and s < hi + HOUR]
    out = []
    hour = first
    while hour < hi:
        after = hour + HOUR
        if any(s < after and e > hour for s, e in near):
            out.append(hour)
        hour = after
    return out


def running_seconds(running: Spans) -> int:
    return sum(whole_seconds(s, e) for s, e in running)


class AcceleratorUse:
    """Rule 10's figures of a set of instances (a job, or a job inside a day)."""

    def __init__(self) -> None:
        self.accelerator_seconds = 0
        self.measurable_seconds = 0  # running seconds of instances with an accelerator metric
        self.measured = Measured()
        self.effective_seconds = Decimal(0)  # value x accelerators x covered seconds
        self.unknown_types: set[str] = set()

    def add(self, instance_type: str, count: int | None, seconds: int, measured: Measured) -> None:
        """One instance: its accelerator count (None: unknown), running seconds inside the
        scope, and what was measured of them."""
        if count is None:
            self.unknown_types.add(instance_type)
        else:
            self.accelerator_seconds += seconds * count
        self.measurable_seconds += seconds
        self.measured = self.measured + measured
        if count is not None:
            self.effective_seconds += measured.weighted * count

    @property
    def accelerator_hours(self) -> Decimal | None:
        if self.unknown_types:
            return None
        return Decimal(self.accelerator_seconds) / SECONDS_PER_HOUR

    @property
    def utilization(self) -> Decimal | None:
        return self.measured.utilization

    @property
    def measured_share(self) -> Decimal | None:
        """Covered seconds / running seconds; None where nothing could be measured."""
        if not self.measured.covered_seconds or not self.measurable_seconds:
            return None
        return Decimal(self.measured.covered_seconds) / self.measurable_seconds

    @property
    def effective_accelerator_hours(self) -> Decimal | None:
        """Measured time only, never extrapolated; None without a datapoint (or with an
        instance of unknown count among the measured)."""
        if not self.measured.covered_seconds or self.unknown_types:
            return None
        return self.effective_seconds / SECONDS_PER_HOUR


def accelerator_count(instance_type: str, counts: Mapping[str, int]) -> int | None:
    return counts.get(instance_type)


def warmup_end(
    started_at: datetime | None,
    checkpoint_completions: Iterable[datetime],
    accelerator_ok: Iterable[datetime],
) -> datetime | None:
    """Rule 11: the first evidence of useful work at or after the job's first start (a
    complete checkpoint, or an accelerator-low alarm going OK); None without either."""
    if started_at is None:
        return None
    evidence = [t for t in (*checkpoint_completions, *accelerator_ok) if t >= started_at]
    return min(evidence, default=None)
