"""Why did spend change between two periods: usage against rate, beside efficiency.

With H the accelerator instance-hours of a scope in a period and r its average
effective $ per accelerator instance-hour (C / H, C the accelerator instances' cost),
the change C1 - C0 splits exactly into

    usage = (H1 - H0) x r0      (more or fewer hours at the old rate)
    rate  = (r1 - r0) x H1      (a dearer or cheaper hour, on the new hours)

because H1 r1 - H0 r0 = (H1 - H0) r0 + (r1 - r0) H1. A period without accelerator
hours has no average rate; it takes the other period's, so the whole change is usage.
Beside it, efficiency: the change in wasted cost (idle + rerun) and in cost per 1,000
steps, so "we trained more" reads apart from "we wasted more". Other spend (EBS,
checkpoint storage, CPU instances) is reported as its own line, so the figures add up
to the change in total spend.

Pure but for ``scope_change``: a job's records in, figures out; no clock, no AWS.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from shared.domain.clock import whole_seconds
from shared.domain.day_split import instance_between, job_between
from shared.domain.job import JobRecords
from shared.domain.segments import SeriesReader
from shared.reports.formatting import iso, money

SECONDS_PER_HOUR = Decimal(3600)


def is_accelerator(instance_type: str) -> bool:
    """Trainium/Inferentia (trn*, inf*) and NVIDIA GPU (p*, g* families) instances."""
    family = instance_type.split(".", 1)[0]
    if family.startswith(("trn", "inf")):
        return True
    return family[:1] in ("p", "g") and family[1:2].isdigit()


@dataclass(frozen=True)
class PeriodFigures:
    """A scope's figures inside (start, end]."""

    start: datetime
    end: datetime
    accelerator_hours: Decimal
    accelerator_usd: Decimal
    total_usd: Decimal
    wasted_idle_usd: Decimal
    wasted_rerun_usd: Decimal
    steps: int | None  # training steps progressed in the period; None: no stepped checkpoint
    jobs: int

    @property
    def rate(self) -> Decimal | None:
        if self.accelerator_hours == 0:
            return None
        return self.accelerator_usd / self.accelerator_hours

    @property
    def wasted_usd(self) -> Decimal:
        return self.wasted_idle_usd + self.wasted_rerun_usd

    @property
    def cost_per_1k_steps(self) -> Decimal | None:
        if not self.steps:
            return None
        return self.total_usd * 1000 / self.steps


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
    """(running hours, running cost) of the job's accelerator instances inside (start, end]."""
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


def period_figures(
    jobs: Sequence[JobRecords], start: datetime, end: datetime, now: datetime,
    series: SeriesReader | None,
) -> PeriodFigures:  # fmt: skip
    """The figures of the jobs inside (start, end], as the ledger knows them at ``now``."""
    hours = accel = total = idle = rerun = Decimal(0)
    steps: int | None = None
    counted = 0
    for records in jobs:
        breakdown, _ = job_between(records, start, end, now, series)
        total += breakdown["total"]
        idle += breakdown["wasted_idle"]
        rerun += breakdown["wasted_rerun"]
        job_hours, job_accel = accelerator_figures(records, start, end, now, series)
        hours += job_hours
        accel += job_accel
        job_steps = steps_between(records, start, end)
        if job_steps is not None:
            steps = (steps or 0) + job_steps
        if breakdown["total"] or job_hours:
            counted += 1
    return PeriodFigures(
        start=start,
        end=end,
        accelerator_hours=hours,
        accelerator_usd=accel,
        total_usd=total,
        wasted_idle_usd=idle,
        wasted_rerun_usd=rerun,
        steps=steps,
        jobs=counted,
    )


@dataclass(frozen=True)
class ChangeDecomposition:
    before: PeriodFigures
    after: PeriodFigures
    usage_usd: Decimal
    rate_usd: Decimal

    @property
    def accelerator_change_usd(self) -> Decimal:
        return self.after.accelerator_usd - self.before.accelerator_usd

    @property
    def other_change_usd(self) -> Decimal:
        """EBS, checkpoint storage and CPU instances: outside H and r."""
        return (self.after.total_usd - self.after.accelerator_usd) - (
            self.before.total_usd - self.before.accelerator_usd
        )

    @property
    def total_change_usd(self) -> Decimal:
        return self.after.total_usd - self.before.total_usd


def decompose(before: PeriodFigures, after: PeriodFigures) -> ChangeDecomposition:
    """usage = (H1 - H0) x r0 and rate = (r1 - r0) x H1; they add up to C1 - C0."""
    h0, h1 = before.accelerator_hours, after.accelerator_hours
    r0 = before.rate if before.rate is not None else after.rate
    r1 = after.rate if after.rate is not None else r0
    if r0 is None or r1 is None:  # no accelerator hours in either period
        return ChangeDecomposition(before, after, Decimal(0), Decimal(0))
    return ChangeDecomposition(before, after, (h1 - h0) * r0, (r1 - r0) * h1)


def _maybe(value: Decimal | None) -> str | None:
    return money(value) if value is not None else None


def _period_json(p: PeriodFigures) -> dict[str, Any]:
    return {
        "start": iso(p.start),
        "end": iso(p.end),
        "jobs": p.jobs,
        "accelerator_hours": money(p.accelerator_hours),
        "accelerator_usd": money(p.accelerator_usd),
        "usd_per_accelerator_hour": _maybe(p.rate),
        "total_usd": money(p.total_usd),
        "wasted_idle_usd": money(p.wasted_idle_usd),
        "wasted_rerun_usd": money(p.wasted_rerun_usd),
        "wasted_usd": money(p.wasted_usd),
        "steps": p.steps,
        "cost_per_1k_steps_usd": _maybe(p.cost_per_1k_steps),
    }


def change_json(change: ChangeDecomposition) -> dict[str, Any]:
    """The API's document of a decomposition (decimal strings, ISO times)."""
    before, after = change.before, change.after
    per_1k = (
        after.cost_per_1k_steps - before.cost_per_1k_steps
        if after.cost_per_1k_steps is not None and before.cost_per_1k_steps is not None
        else None
    )
    notes = [
        "H: accelerator (Trainium, Inferentia, NVIDIA GPU) instance-hours running in the "
        "period; r = C / H, C their effective instance cost in the period",
        "usage + rate = the change in accelerator instance cost; other = EBS, checkpoint "
        "storage and CPU instances; all three add up to the change in total spend",
    ]
    if before.rate is None or after.rate is None:
        notes.append(
            "a period without accelerator hours has no average rate: the other period's "
            "is used, so the change is all usage"
        )
    if per_1k is None:
        notes.append("cost per 1,000 steps needs stepped checkpoints in both periods")
    return {
        "before": _period_json(before),
        "after": _period_json(after),
        "change": {
            "total_usd": money(change.total_change_usd),
            "accelerator_usd": money(change.accelerator_change_usd),
            "usage_usd": money(change.usage_usd),
            "rate_usd": money(change.rate_usd),
            "other_usd": money(change.other_change_usd),
            "wasted_usd": money(after.wasted_usd - before.wasted_usd),
            "wasted_idle_usd": money(after.wasted_idle_usd - before.wasted_idle_usd),
            "wasted_rerun_usd": money(after.wasted_rerun_usd - before.wasted_rerun_usd),
            "cost_per_1k_steps_usd": _maybe(per_1k),
        },
        "notes": notes,
        "estimated": True,
    }


def scope_change(
    deps: Any,
    now: datetime,
    before: tuple[datetime, datetime],
    after: tuple[datetime, datetime],
    tag_filters: dict[str, str],
    job_id: str | None = None,
) -> ChangeDecomposition:
    """The decomposition for the jobs of a scope (grouping-tag filters and/or one job),
    read from the ledger (the rollups, then each job in scope): the one function here
    that does I/O."""
    from shared.adapters.job_records import load_job
    from shared.domain.job import rollup_tags
    from shared.services.job_view import active_between, all_rollups

    first = min(before[0], after[0])
    last = (max(before[1], after[1]) - SECOND).date()
    rollups = all_rollups(deps.rollups)
    jobs: list[JobRecords] = []
    for candidate, items in sorted(rollups.items()):
        if job_id is not None and candidate != job_id:
            continue
        if not active_between(items, first.date(), last, now):
            continue
        tags, _ = rollup_tags(items)
        if any(tags.get(k) != v for k, v in tag_filters.items()):
            continue
        records = load_job(deps.table, deps.rollups, candidate, since=first)
        if records is not None:
            jobs.append(records)
    series = deps.prices.series
    return decompose(
        period_figures(jobs, before[0], before[1], now, series),
        period_figures(jobs, after[0], after[1], now, series),
    )


SECOND = timedelta(seconds=1)
