"""One budget forecast: a projected period total with an 80 % range, the moment each
threshold would be crossed, and how each running job was projected.

Each running job keeps its current burn (its accrual, read through ``SpendAt``) until
its projected end:

- ``declared_end``: its ``expected-duration-hours`` tag from its first event; the end is
  taken as given (low = central = high).
- ``assumed_duration``: no declared end (or it has outlived it): the job's length is
  assumed log-normal (``DurationPrior``: median ``median_hours``, spread ``sigma``),
  conditioned on the time it is known to have run. The central end is the conditional
  median, the range's ends the conditional 10th and 90th percentiles.

The forecast depends on the ledger's facts (accruals, each job's first and last event,
its tags) and not on the clock, with two exceptions, both at moments it names: a
threshold crossing once past is dropped (``state = "crossed"``), and a running job that
outlives the low end of its range (or its declared end) is known to have run that long
(``revises_at``), so it is projected again from that age. Between two deliveries of
facts and before ``revises_at`` every tick gives the same forecast.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from statistics import NormalDist
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# What the range means: the 10th and 90th percentiles of each assumed job length.
RANGE_LOW, RANGE_HIGH = 0.1, 0.9
RANGE_MEANING = (
    "80 % interval: each job without a declared end stops between the 10th and 90th "
    "percentile of its assumed length (declared ends are taken as given)"
)
# At most this many survival steps per job (a job far older than its assumed length).
MAX_STEPS = 200
_NORMAL = NormalDist()
SpendAt = Callable[[str, datetime], Decimal]  # (job_id, moment) -> the job's period spend
Method = Literal["declared_end", "assumed_duration"]
State = Literal["crossed", "projected", "possible", "not_projected"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class DurationPrior(_Frozen):
    """The assumed length of a job without a declared end. ``lognormal``: median
    ``median_hours``, ``sigma`` the standard deviation of the log of the length.
    ``pareto``: a job known to have run ``a`` hours (at least ``min_hours``) lasts
    ``a / (1 - p) ** (1 / alpha)`` at its ``p`` quantile (alpha 1: as long again, at
    the median, as it is known to have run)."""

    shape: Literal["lognormal", "pareto"] = "lognormal"
    median_hours: float = Field(default=24.0, gt=0)
    sigma: float = Field(default=1.0, gt=0)
    alpha: float = Field(default=1.0, gt=0)
    min_hours: float = Field(default=1.0, gt=0)

    def describe(self) -> str:
        if self.shape == "pareto":
            factor = 2 ** (1 / self.alpha) - 1
            again = "as long again" if abs(factor - 1) < 1e-9 else f"{factor:.2g} times as long"
            return (
                f"a job without a declared end is assumed to run {again} as it is known to "
                f"have run (the median; counted from at least {self.min_hours:g} h; Pareto, "
                f"alpha {self.alpha:g}: 80 % of such runs end between "
                f"{1 / 0.9 ** (1 / self.alpha):.2f} and {10 ** (1 / self.alpha):.3g} times "
                "that age)"
            )
        low = self.median_hours * math.exp(self.sigma * _NORMAL.inv_cdf(RANGE_LOW))
        high = self.median_hours * math.exp(self.sigma * _NORMAL.inv_cdf(RANGE_HIGH))
        return (
            f"a job without a declared end is assumed to last {self.median_hours:g} h "
            f"(median; 80 % of runs between {low:.1f} h and {high:.1f} h, log-normal), "
            "given how long it is known to have run"
        )

    def quantile_hours(self, p: float, survived_hours: float) -> float:
        """The ``p`` quantile of the length of a job known to have run ``survived_hours``."""
        if self.shape == "pareto":
            scale = max(survived_hours, self.min_hours)
            return float(scale / (1 - p) ** (1 / self.alpha))
        mu = math.log(self.median_hours)
        below = (
            _NORMAL.cdf((math.log(survived_hours) - mu) / self.sigma) if survived_hours > 0 else 0.0
        )
        u = min(below + p * (1 - below), 1 - 1e-12)
        return max(math.exp(mu + self.sigma * _NORMAL.inv_cdf(u)), survived_hours)


class JobFacts(_Frozen):
    """What the ledger knows of one job in the budget's scope."""

    job_id: str
    running: bool  # its accrual is open (a segment, a volume or storage accrues)
    first_event_at: datetime
    last_event_at: datetime
    declared_hours: Decimal | None = None


class JobProjection(_Frozen):
    """How one running job was projected: to these ends (capped at the period's end)."""

    job_id: str
    method: Method
    low_end: datetime
    end: datetime
    high_end: datetime
    known_hours: float = Field(description="how long it is known to have run")
    declared_hours: Decimal | None
    past_declared_end: bool

    def describe(self) -> str:
        if self.method == "declared_end":
            return f"{self.job_id}: to its declared end {_iso(self.end)} ({self.declared_hours} h)"
        past = (
            f", past its declared end ({self.declared_hours} h)" if self.past_declared_end else ""
        )
        return (
            f"{self.job_id}: assumed length, known to have run {self.known_hours:.1f} h{past}: "
            f"to {_iso(self.end)} (80 %: {_iso(self.low_end)} to {_iso(self.high_end)})"
        )


class Crossing(_Frozen):
    """One threshold: when the central projection crosses it (``at``), when the range's
    high end does (``high_at``); ``state``: crossed (already, by spend), projected
    (the central projection crosses it in the period), possible (only the high end
    does), not_projected."""

    threshold: int
    amount_usd: Decimal
    state: State
    at: datetime | None
    high_at: datetime | None


class BudgetForecast(_Frozen):
    """The one forecast of a budget's period (see the module's docstring)."""

    total_usd: Decimal
    low_usd: Decimal
    high_usd: Decimal
    until: datetime = Field(description="the central projection's last end")
    range_meaning: str = RANGE_MEANING
    assumption: str
    crossings: tuple[Crossing, ...]
    jobs: tuple[JobProjection, ...]
    revises_at: datetime | None = Field(
        description="when, with no new fact, a running job outlives its range's low end or "
        "its declared end and is projected again"
    )

    def crossing(self, threshold: int) -> Crossing | None:
        return next((c for c in self.crossings if c.threshold == threshold), None)

    def next_crossing(self) -> Crossing | None:
        """The earliest crossing the central projection predicts (a timer's moment)."""
        ahead = [(c.at, c) for c in self.crossings if c.state == "projected" and c.at]
        return min(ahead, key=lambda pair: pair[0])[1] if ahead else None


def project_job(
    facts: JobFacts, prior: DurationPrior, now: datetime, period_end: datetime | None
) -> JobProjection:
    """A running job's ends: declared, else assumed given the age it is known to have
    reached (stepped to the low end each time the clock passes it)."""
    start = facts.first_event_at
    declared = facts.declared_hours
    declared_end = start + timedelta(hours=float(declared)) if declared is not None else None
    if declared_end is not None and declared_end > now and declared_end > facts.last_event_at:
        ends = (declared_end, declared_end, declared_end)
        known = (facts.last_event_at - start).total_seconds() / 3600
        method: Method = "declared_end"
    else:
        known = (facts.last_event_at - start).total_seconds() / 3600
        if declared is not None:
            known = max(known, float(declared))
        ends = _assumed_ends(start, known, prior)
        for _ in range(MAX_STEPS):
            if ends[0] > now:
                break
            known = (ends[0] - start).total_seconds() / 3600
            ends = _assumed_ends(start, known, prior)
        else:  # far past its assumed length: known to have run until now
            known = (now - start).total_seconds() / 3600
            ends = _assumed_ends(start, known, prior)
        method = "assumed_duration"
    if period_end is not None:
        ends = (min(ends[0], period_end), min(ends[1], period_end), min(ends[2], period_end))
    return JobProjection(
        job_id=facts.job_id,
        method=method,
        low_end=ends[0],
        end=ends[1],
        high_end=ends[2],
        known_hours=round(known, 6),
        declared_hours=declared,
        past_declared_end=method == "assumed_duration" and declared is not None,
    )


def _assumed_ends(
    start: datetime, known_hours: float, prior: DurationPrior
) -> tuple[datetime, datetime, datetime]:
    return (
        _ceil_second(start + timedelta(hours=prior.quantile_hours(RANGE_LOW, known_hours))),
        _ceil_second(start + timedelta(hours=prior.quantile_hours(0.5, known_hours))),
        _ceil_second(start + timedelta(hours=prior.quantile_hours(RANGE_HIGH, known_hours))),
    )


def budget_forecast(
    jobs: Sequence[JobFacts],
    spend_at: SpendAt,
    amount: Decimal,
    thresholds: Sequence[int],
    period: tuple[datetime, datetime | None],
    prior: DurationPrior,
    now: datetime,
) -> BudgetForecast:
    """The forecast of one budget's period from the facts of the jobs in its scope.
    ``spend_at(job, m)`` is a job's spend in the period up to ``m`` at its current burn
    (exact for ``m`` at or after its last event; closed jobs: a constant); ``period``
    its (start, end), no end for a total budget."""
    period_start, period_end = period
    closed = sum((spend_at(j.job_id, j.last_event_at) for j in jobs if not j.running), Decimal(0))
    running = sorted((j for j in jobs if j.running), key=lambda j: j.job_id)
    projections = tuple(project_job(j, prior, now, period_end) for j in running)
    # From here on every job's spend is its current burn's: crossings are searched after.
    anchor = _floor_second(max([period_start, *(j.last_event_at for j in jobs)]))

    def curve(ends: Sequence[datetime]) -> Callable[[datetime], Decimal]:
        def at(moment: datetime) -> Decimal:
            return closed + sum(
                (
                    spend_at(p.job_id, max(min(moment, e), anchor))
                    for p, e in zip(projections, ends, strict=True)
                ),
                Decimal(0),
            )

        return at

    central = curve([p.end for p in projections])
    high = curve([p.high_end for p in projections])
    low = curve([p.low_end for p in projections])
    until = max([anchor, *(p.end for p in projections)])
    high_until = max([anchor, *(p.high_end for p in projections)])
    total, high_total = central(until), high(high_until)
    crossings = []
    for threshold in sorted(set(thresholds)):
        target = amount * threshold / 100
        at = _first_reaching(central, target, anchor, until)
        high_at = _first_reaching(high, target, anchor, high_until)
        if at is not None and at <= now:
            state: State = "crossed"
            at = high_at = None
        elif at is not None:
            state = "projected"
        elif high_at is not None:
            state = "possible"
        else:
            state = "not_projected"
        crossings.append(
            Crossing(threshold=threshold, amount_usd=target, state=state, at=at, high_at=high_at)
        )
    revisions = [
        p.low_end
        for p in projections
        if p.low_end > now and (period_end is None or p.low_end < period_end)
    ]
    return BudgetForecast(
        total_usd=total,
        low_usd=low(max([anchor, *(p.low_end for p in projections)])),
        high_usd=high_total,
        until=until,
        assumption=prior.describe(),
        crossings=tuple(crossings),
        jobs=projections,
        revises_at=min(revisions) if revisions else None,
    )


def _first_reaching(
    curve: Callable[[datetime], Decimal], target: Decimal, start: datetime, end: datetime
) -> datetime | None:
    """The first whole second in [start, end] where the (non-decreasing) curve reaches
    ``target``; ``start`` when it already has; None when it never does by ``end``."""
    if curve(end) < target:
        return None
    if curve(start) >= target:
        return start
    low, high = 0, math.ceil((end - start).total_seconds())  # curve(start + high) >= target
    while high - low > 1:
        middle = (low + high) // 2
        if curve(start + timedelta(seconds=middle)) >= target:
            high = middle
        else:
            low = middle
    return start + timedelta(seconds=high)


def _floor_second(moment: datetime) -> datetime:
    return moment.replace(microsecond=0)


def _ceil_second(moment: datetime) -> datetime:
    floor = moment.replace(microsecond=0)
    return floor if floor == moment else floor + timedelta(seconds=1)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
