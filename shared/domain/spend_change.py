"""Why did spend change between two periods: more use, efficiency or price.

Each job (one model's training run) is split on its own by the logarithmic mean Divisia
index (``shared.domain.divisia``): its accelerator instances' cost C = Q x k x p, with H
its accelerator-hours (chip-hours: running hours x accelerators per instance), p = C / H
its $ per accelerator-hour, Q its work (steps progressed, or where it has no stepped
checkpoints in both periods its utilized accelerator-hours H x u) and k = H / Q. The
parts (use, efficiency, price) add up exactly to the job's change; the scope's parts are
the sums over its jobs (steps of two jobs are never added), rounded to the cent so that
they and ``other`` (EBS, checkpoint storage, CPU instances, SageMaker and reservation
charges) add up to the change in total spend as it is shown, to the cent.

Pure: a job's records in, figures out; no clock, no AWS (``shared.services.change``
reads the ledger).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_HALF_EVEN, Decimal

from shared.domain.clock import whole_seconds
from shared.domain.day_split import instance_between, job_between
from shared.domain.divisia import CENT, Factors, Split, split, to_cents
from shared.domain.job import JobRecords
from shared.domain.segments import SeriesReader
from shared.domain.utilization import Measured

SECONDS_PER_HOUR = Decimal(3600)
# What an instance-hour measured: (account, instance id, start, end) -> Measured.
MeasuredReader = Callable[[str, str, datetime, datetime], Measured]


def is_accelerator(instance_type: str) -> bool:
    """Trainium/Inferentia (trn*, inf*) and NVIDIA GPU (p*, g* families) instances."""
    family = instance_type.split(".", 1)[0]
    if family.startswith(("trn", "inf")):
        return True
    return family[:1] in ("p", "g") and family[1:2].isdigit()


@dataclass(frozen=True)
class JobPeriod:
    """One job's figures inside (start, end]."""

    job_id: str
    accelerator_hours: Decimal  # chip-hours; instance-hours where a count is unknown
    per_instance: bool  # True: ``accelerator_hours`` are instance-hours (count unknown)
    accelerator_usd: Decimal
    total_usd: Decimal
    wasted_idle_usd: Decimal
    wasted_rerun_usd: Decimal
    steps: int | None  # steps progressed; None: no stepped checkpoint in the period
    utilization: Decimal | None  # measured mean; None: not measured

    @property
    def rate(self) -> Decimal | None:
        return self.accelerator_usd / self.accelerator_hours if self.accelerator_hours else None

    @property
    def cost_per_1k_steps(self) -> Decimal | None:
        return self.total_usd * 1000 / self.steps if self.steps else None


@dataclass(frozen=True)
class PeriodFigures:
    """A scope's figures inside (start, end]: the sums of its jobs' (never their steps)."""

    start: datetime
    end: datetime
    jobs: tuple[JobPeriod, ...]

    def _sum(self, name: str) -> Decimal:
        return sum((Decimal(getattr(j, name)) for j in self.jobs), Decimal(0))

    @property
    def accelerator_hours(self) -> Decimal:
        """Chip-hours of the jobs whose accelerator counts are known."""
        return sum((j.accelerator_hours for j in self.jobs if not j.per_instance), Decimal(0))

    @property
    def accelerator_usd(self) -> Decimal:
        return self._sum("accelerator_usd")

    @property
    def total_usd(self) -> Decimal:
        return self._sum("total_usd")

    @property
    def wasted_idle_usd(self) -> Decimal:
        return self._sum("wasted_idle_usd")

    @property
    def wasted_rerun_usd(self) -> Decimal:
        return self._sum("wasted_rerun_usd")

    @property
    def wasted_usd(self) -> Decimal:
        return self.wasted_idle_usd + self.wasted_rerun_usd

    @property
    def rate(self) -> Decimal | None:
        known = [j for j in self.jobs if not j.per_instance]
        hours = sum((j.accelerator_hours for j in known), Decimal(0))
        return sum((j.accelerator_usd for j in known), Decimal(0)) / hours if hours else None

    @property
    def active_jobs(self) -> int:
        return sum(1 for j in self.jobs if j.total_usd or j.accelerator_hours)


def _step_marks(records: JobRecords) -> list[tuple[datetime, int]]:
    """(completion time, step) of each stepped checkpoint: a step completes at the
    latest write of its shards."""
    marks = []
    for item in records.steps:
        step, last = str(item.get("step", "")), item.get("last_write")
        if step.isdigit() and last:
            marks.append((datetime.fromisoformat(str(last)), int(step)))
    return sorted(marks)


def steps_between(records: JobRecords, start: datetime, end: datetime) -> int | None:
    """Steps progressed in (start, end]: the highest step checkpointed by ``end`` less the
    highest by ``start`` (0 if none: a job counts its steps from 0). None when no stepped
    checkpoint completed inside the period."""
    marks = _step_marks(records)
    inside = [step for at, step in marks if start < at <= end]
    if not inside:
        return None
    before = max((step for at, step in marks if at <= start), default=0)
    return max(0, max(step for at, step in marks if at <= end) - before)


def accelerator_figures(
    records: JobRecords, start: datetime, end: datetime, now: datetime,
    series: SeriesReader | None,
) -> tuple[Decimal, Decimal]:  # fmt: skip
    """(running instance-hours, running cost) of the job's accelerator instances inside
    (start, end]."""
    types = {h.instance_id: h.profile.instance_type for h in records.heads}
    seconds = 0
    usd = Decimal(0)
    for seg in records.all_segments():
        if not is_accelerator(types.get(seg.instance_id, "")):
            continue
        seg_end = seg.span.end if seg.span.end is not None else max(now, seg.span.start)
        seconds += whole_seconds(max(seg.span.start, start), min(seg_end, end))
        usd += instance_between([seg], start, end, series)
    return Decimal(seconds) / SECONDS_PER_HOUR, usd


def job_period(
    records: JobRecords, start: datetime, end: datetime, now: datetime,
    series: SeriesReader | None, counts: Mapping[str, int],
    measured: MeasuredReader | None = None,
) -> JobPeriod:  # fmt: skip
    """One job's figures inside (start, end], as the ledger knows them at ``now``."""
    heads = {h.instance_id: h for h in records.heads}
    chip_seconds = instance_seconds = 0
    usd = Decimal(0)
    unknown = False
    running: set[str] = set()
    for seg in records.all_segments():
        head = heads.get(seg.instance_id)
        instance_type = head.profile.instance_type if head else ""
        if not is_accelerator(instance_type):
            continue
        seg_end = seg.span.end if seg.span.end is not None else max(now, seg.span.start)
        seconds = whole_seconds(max(seg.span.start, start), min(seg_end, end, now))
        count = counts.get(instance_type)
        unknown = unknown or count is None
        chip_seconds += seconds * (count or 0)
        instance_seconds += seconds
        usd += instance_between([seg], start, end, series)
        if seconds:
            running.add(seg.instance_id)
    use = Measured()
    if measured is not None:
        for instance_id in sorted(running):
            use = use + measured(heads[instance_id].account, instance_id, start, end)
    breakdown, _ = job_between(records, start, end, now, series)
    return JobPeriod(
        job_id=records.job_id,
        accelerator_hours=Decimal(instance_seconds if unknown else chip_seconds) / SECONDS_PER_HOUR,
        per_instance=unknown,
        accelerator_usd=usd,
        total_usd=breakdown["total"],
        wasted_idle_usd=breakdown["wasted_idle"],
        wasted_rerun_usd=breakdown["wasted_rerun"],
        steps=steps_between(records, start, end),
        utilization=use.utilization,
    )


def period_figures(
    jobs: Sequence[JobRecords], start: datetime, end: datetime, now: datetime,
    series: SeriesReader | None, counts: Mapping[str, int] | None = None,
    measured: MeasuredReader | None = None,
) -> PeriodFigures:  # fmt: skip
    """The figures of the jobs inside (start, end], as the ledger knows them at ``now``
    (``counts``: accelerators per instance type, the ledger's table by default)."""
    from shared.config.measurement import DEFAULT_ACCELERATOR_COUNTS

    table = DEFAULT_ACCELERATOR_COUNTS if counts is None else counts
    return PeriodFigures(
        start, end, tuple(job_period(r, start, end, now, series, table, measured) for r in jobs)
    )


@dataclass(frozen=True)
class JobChange:
    """One job's split, and the work its efficiency is measured against."""

    job_id: str
    before: JobPeriod
    after: JobPeriod
    basis: str  # "steps", "utilization", "none" (no work measured), "one_period"
    parts: Split

    @property
    def other_usd(self) -> Decimal:
        return (self.after.total_usd - self.after.accelerator_usd) - (
            self.before.total_usd - self.before.accelerator_usd
        )


def _work(period: JobPeriod, basis: str) -> Decimal | None:
    if basis == "steps":
        return Decimal(period.steps) if period.steps else None
    if basis == "utilization" and period.utilization:
        return period.accelerator_hours * period.utilization
    return None


def job_change(before: JobPeriod, after: JobPeriod) -> JobChange:
    """The job's LMDI split: efficiency per 1,000 steps where it progressed steps in both
    periods, else per utilized accelerator-hour where utilization was measured in both."""
    if not (before.accelerator_usd and after.accelerator_usd):
        basis = "one_period"
    elif before.steps and after.steps:
        basis = "steps"
    elif before.utilization and after.utilization:
        basis = "utilization"
    else:
        basis = "none"
    parts = split(
        Factors(before.accelerator_usd, before.accelerator_hours, _work(before, basis)),
        Factors(after.accelerator_usd, after.accelerator_hours, _work(after, basis)),
    )
    return JobChange(before.job_id, before, after, basis, parts)


@dataclass(frozen=True)
class ChangeDecomposition:
    before: PeriodFigures
    after: PeriodFigures
    jobs: tuple[JobChange, ...]

    def _sum(self, name: str) -> Decimal:
        return sum((getattr(j.parts, name) for j in self.jobs), Decimal(0))

    @property
    def use_usd(self) -> Decimal:
        return self._sum("use")

    @property
    def efficiency_usd(self) -> Decimal:
        return self._sum("efficiency")

    @property
    def price_usd(self) -> Decimal:
        return self._sum("price")

    @property
    def accelerator_change_usd(self) -> Decimal:
        return self.after.accelerator_usd - self.before.accelerator_usd

    @property
    def other_change_usd(self) -> Decimal:
        """EBS, checkpoint storage, CPU instances and managed charges: outside C."""
        return (self.after.total_usd - self.after.accelerator_usd) - (
            self.before.total_usd - self.before.accelerator_usd
        )

    @property
    def total_change_usd(self) -> Decimal:
        return self.after.total_usd - self.before.total_usd

    def cents(self) -> dict[str, Decimal]:
        """use, efficiency, price and other to the cent, adding up to the rounded total
        after less the rounded total before (``divisia.to_cents``'s rule)."""
        change = _cent(self.after.total_usd) - _cent(self.before.total_usd)
        exact = {
            "use": self.use_usd,
            "efficiency": self.efficiency_usd,
            "price": self.price_usd,
            "other": self.other_change_usd,
        }
        return to_cents(exact, change)


def _cent(value: Decimal) -> Decimal:
    return value.quantize(CENT, rounding=ROUND_HALF_EVEN)


def decompose(before: PeriodFigures, after: PeriodFigures) -> ChangeDecomposition:
    """Each job of either period split on its own (its figures in both periods)."""
    earlier = {j.job_id: j for j in before.jobs}
    later = {j.job_id: j for j in after.jobs}
    changes = tuple(
        job_change(earlier[job_id], later[job_id])
        for job_id in sorted(set(earlier) & set(later))
        if earlier[job_id].total_usd or later[job_id].total_usd
    )
    return ChangeDecomposition(before, after, changes)
