"""Turning a job's records into its ``JobCost`` (the figures every view shows): the money
from the rollups' accrual, waste inside rerun windows, progress from checkpoint steps (the
``tokens-per-step`` tag read by its one parser), warnings, accelerator-hours with measured
utilization (rule 10) and the warm-up before the first evidence of useful work (rule 11)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from shared.domain import accrual as acc
from shared.domain.accrual import Accrual
from shared.domain.clock import SECONDS_PER_HOUR, whole_seconds
from shared.domain.ebs import ebs_accrual
from shared.domain.instance import CostWarning, InstanceHead, head_accrual
from shared.domain.job import (
    UNCONFIRMED_ITEMS,
    ClockFn,
    InstanceSummary,
    JobCost,
    JobRecords,
    Status,
    checkpoint_marks,
    cost_in_windows,
    parse_time,
    rerun_windows,
    rollup_tags,
    status_of,
)
from shared.domain.managed.reservation import N_RESERVATIONS
from shared.domain.managed.reservation import view as reservation_view
from shared.domain.managed.training import N_TRAINING, managed_spot_saving
from shared.domain.segments import (
    UNPRICED_PREFIX,
    SegmentCost,
    SeriesReader,
    accrued_to,
    cost_inside,
)
from shared.domain.tags import tokens_per_step
from shared.domain.utilization import AcceleratorUse, Measured, warmup_end


def _instance_summary(
    head: InstanceHead, now: datetime, clock: ClockFn, series: SeriesReader | None
) -> InstanceSummary:
    accrual = head_accrual(head)
    open_segment = head.open_segment
    burn = Decimal(0)
    if open_segment is not None and open_segment.pin is not None:
        pin = open_segment.pin
        if pin.rate is not None:
            burn = pin.rate.effective_usd
        elif series is not None and pin.series is not None:
            burn = series.rate_at(pin.series, now)
    return InstanceSummary(
        instance_id=head.instance_id,
        instance_type=head.profile.instance_type,
        account=head.account,
        region=head.profile.region,
        lifecycle=head.profile.lifecycle,
        instance_usd=accrual.value(acc.INSTANCE, now, clock),
        instance_list_usd=accrual.value(acc.INSTANCE_LIST, now, clock),
        ebs_usd=ebs_accrual(head).value(acc.EBS, now, clock),
        billed_seconds=int(accrual.value(acc.SECONDS, now, clock)),
        running_since=open_segment.span.start if open_segment else None,
        burn_usd_per_hour=burn,
        terminated=head.terminated,
        inferred=head.inferred,
        segments=tuple(accrued_to(s, now, series) for s in head.segments),
    )


def _keys_with_prefix(a: Accrual, prefix: str, now: datetime) -> list[str]:
    components = {comp for (comp, _, _) in a.terms}
    return sorted(
        c.removeprefix(prefix) for c in components if c.startswith(prefix) and a.value(c, now) > 0
    )


def job_cost(
    records: JobRecords,
    now: datetime,
    clock: ClockFn,
    series: SeriesReader | None,
    *,
    marker: bool = False,
    tokens_tag: str = "tokens-per-step",
    accelerator_counts: Mapping[str, int] | None = None,
    measurable: Callable[[str], bool] = lambda _type: False,
) -> JobCost:
    """``accelerator_counts``: accelerators per instance type (rule 10's table);
    ``measurable``: whether an instance type has an accelerator metric (else a CPU node,
    with no accelerators)."""
    a = records.accrual()

    def value(component: str) -> Decimal:
        return a.value(component, now, clock)

    instances = tuple(
        _instance_summary(h, now, clock, series)
        for h in sorted(records.heads, key=lambda h: (h.account, h.instance_id))
    )
    tags, conflicts = rollup_tags(records.rollups)
    segments = records.all_segments()
    windows = rerun_windows(records, now, marker)
    rerun = cost_in_windows(segments, windows, series, list_price=False)
    rerun_list = cost_in_windows(segments, windows, series, list_price=True)
    starts = [str(r["started_at"]) for r in records.rollups if r.get("started_at")]
    started_at = parse_time(min(starts)) if starts else None
    marks = checkpoint_marks(records.steps, marker)
    last_checkpoint_at = marks[-1][0] if marks else None
    risk_from = last_checkpoint_at or started_at
    spend_at_risk = Decimal(0)
    if risk_from is not None:
        spend_at_risk = sum(
            (cost_inside(s, risk_from, now, series, list_price=False) for s in segments),
            Decimal(0),
        )
    instance_usd = value(acc.INSTANCE)
    ebs_usd = value(acc.EBS)
    storage_usd = value(acc.STORAGE)
    managed = value(acc.ML_STORAGE) + value(acc.WARM_POOL) + value(acc.WASTED_RESERVED)
    fsx_usd = value(acc.FSX)
    total = instance_usd + ebs_usd + storage_usd + managed + fsx_usd
    progress = _progress(records, marks, total, tokens_tag)
    unpriced = tuple(_keys_with_prefix(a, UNPRICED_PREFIX, now))
    unconfirmed_extra = _keys_with_prefix(a, "unconfirmed:", now)
    warmup_seconds, warmup_usd = _warmup(records, segments, started_at, series, marker)
    use = _accelerator_use(records, instances, accelerator_counts or {}, measurable)
    last_step = [str(r.get("last_checkpoint_step", "")) for r in records.rollups]
    return JobCost(
        job_id=records.job_id,
        as_of=now,
        tags=tags,
        tag_conflicts=conflicts,
        accounts=tuple(sorted({str(r.get("account", "")) for r in records.rollups})),
        status=_status(a, records, now),
        instances=instances,
        instance_usd=instance_usd,
        instance_list_usd=value(acc.INSTANCE_LIST),
        ebs_usd=ebs_usd,
        checkpoint_storage_usd=storage_usd,
        wasted_rerun_usd=rerun,
        wasted_rerun_list_usd=rerun_list,
        wasted_idle_usd=value(acc.IDLE),
        wasted_idle_list_usd=value(acc.IDLE_LIST),
        burn_rate_usd_per_hour=sum((i.burn_usd_per_hour for i in instances), Decimal(0)),
        billed_seconds=int(value(acc.SECONDS)),
        started_at=started_at,
        unconfirmed=(
            *UNCONFIRMED_ITEMS,
            *(f"unpriced:{u}" for u in unpriced),
            *unconfirmed_extra,
        ),
        unpriced=unpriced,
        price_sources=_price_sources(records),
        warnings=_warnings(records, conflicts),
        # A counter on each rollup (distinct steps), not an accrual.
        checkpoints=sum(int(r.get("checkpoints", 0)) for r in records.rollups),
        checkpoint_objects=int(value("n_objects")),
        last_checkpoint_at=last_checkpoint_at,
        last_checkpoint_step=progress.steps_max
        if progress.steps_max is not None
        else (int(max(last_step)) if any(last_step) else None),
        interruptions=int(value("n_interruptions")),
        rebalance_recommendations=int(value("n_rebalances")),
        spend_at_risk_usd=spend_at_risk,
        cost_per_1k_steps_usd=progress.cost_per_1k,
        steps_per_hour=progress.steps_per_hour,
        cost_per_million_tokens_usd=progress.per_million,
        tokens_per_step=progress.tokens,
        checkpoint_cadence_seconds=progress.cadence,
        idle_seconds=int(value("idle_seconds")),
        warmup_seconds=warmup_seconds,
        warmup_usd=warmup_usd,
        ml_storage_usd=value(acc.ML_STORAGE),
        warm_pool_usd=value(acc.WARM_POOL),
        wasted_reserved_usd=value(acc.WASTED_RESERVED),
        managed_spot_saving=managed_spot_saving(a, now),
        training_jobs=tuple(sorted(h.name for h in records.training)),
        reservations=tuple(
            reservation_view(h, now)
            for h in sorted(records.reservations, key=lambda h: h.reservation_id)
        ),
        has_training=value(N_TRAINING) > 0,
        has_reservation=value(N_RESERVATIONS) > 0,
        # SageMaker jobs' accelerators are not counted yet: unknown, not 0.
        accelerator_seconds=None
        if use.unknown_types or records.training
        else use.accelerator_seconds,
        utilization=use.utilization,
        utilization_measured_share=use.measured_share,
        effective_accelerator_hours=use.effective_accelerator_hours,
        accelerator_counts_unknown=tuple(sorted(use.unknown_types)),
        fsx_usd=fsx_usd,
        file_systems=tuple(sorted(h.file_system_id for h in records.file_systems)),
    )


def _accelerator_use(
    records: JobRecords,
    instances: Sequence[InstanceSummary],
    counts: Mapping[str, int],
    measurable: Callable[[str], bool],
) -> AcceleratorUse:
    """Rule 10 over the job's accelerator instances (a CPU node has none and is not
    measured); running seconds are the instance's billed seconds."""
    use = AcceleratorUse()
    for i in instances:
        if measurable(i.instance_type):
            measured = records.measured.get((i.account, i.instance_id), Measured())
            use.add(i.instance_type, counts.get(i.instance_type), i.billed_seconds, measured)
    return use


def _status(a: Accrual, records: JobRecords, now: datetime) -> Status:
    """As ``status_of``; a job that only carries a reservation's unused time runs until the
    reservation's end."""
    if a.value("n_instances", now) == 0 and a.value(N_RESERVATIONS, now) > 0:
        until = max((str(r.get("reserved_until", "")) for r in records.rollups), default="")
        ends = parse_time(until)
        return "running" if ends is None or now < ends else "complete"
    return status_of(a, records.rollups, now)


@dataclass(frozen=True)
class _Progress:
    steps_max: int | None
    cost_per_1k: Decimal | None
    steps_per_hour: Decimal | None
    cadence: int | None
    tokens: int | None
    per_million: Decimal | None


def _progress(
    records: JobRecords, marks: Sequence[tuple[datetime, str]], total: Decimal, tokens_tag: str
) -> _Progress:
    """Steps, pace and cadence from the checkpoint marks; cost per 1k steps and per
    million tokens (the first instance with a valid ``tokens-per-step`` tag)."""
    numbered = [(at, int(step)) for at, step in marks if step.isdigit()]
    steps_max = max((s for _, s in numbered), default=None)
    cost_per_1k = total * 1000 / steps_max if steps_max else None
    steps_per_hour = None
    if len(numbered) >= 2 and numbered[-1][0] > numbered[0][0]:
        hours = Decimal(whole_seconds(numbered[0][0], numbered[-1][0])) / SECONDS_PER_HOUR
        steps_per_hour = Decimal(numbered[-1][1] - numbered[0][1]) / hours
    cadence = None
    if len(marks) >= 2:
        cadence = whole_seconds(marks[0][0], marks[-1][0]) // (len(marks) - 1)
    tokens = next(
        (
            t
            for h in records.heads
            if (t := tokens_per_step(h.profile.tags.get(tokens_tag))) is not None
        ),
        None,
    )
    per_million = total * 1_000_000 / (steps_max * tokens) if steps_max and tokens else None
    return _Progress(steps_max, cost_per_1k, steps_per_hour, cadence, tokens, per_million)


def _price_sources(records: JobRecords) -> tuple[str, ...]:
    sources: set[str] = set()
    for rollup in records.rollups:
        sources |= {str(s) for s in rollup.get("price_sources", set()) or set()}
    return tuple(sorted(sources))


def _warnings(
    records: JobRecords, conflicts: dict[str, tuple[str, ...]]
) -> tuple[CostWarning, ...]:
    """The instances' warnings, each once, then one per conflicting grouping tag."""
    warnings: list[CostWarning] = []
    for head in records.heads:
        for w in head.warnings:
            if w not in warnings:
                warnings.append(w)
    for key, values in sorted(conflicts.items()):
        warnings.append(
            CostWarning(
                kind="tag_conflict",
                detail=f"instances of {records.job_id} disagree on {key}: "
                f"{', '.join(values)}; kept {values[0]!r} (the instance that ran first)",
            )
        )
    return tuple(warnings)


def _warmup(
    records: JobRecords,
    segments: Sequence[SegmentCost],
    started_at: datetime | None,
    series: SeriesReader | None,
    marker: bool,
) -> tuple[int | None, Decimal | None]:
    """Rule 11: from the job's first start to its first complete checkpoint (its marker,
    or its first object without one) or its first accelerator-low alarm going OK,
    whichever comes first; None (not measured) without either."""
    name = "complete_at" if marker else "first_write"
    completions = [t for s in records.steps if (t := parse_time(s.get(name))) is not None]
    busy = [
        c.at
        for h in records.heads
        for c in h.alarms
        if c.signal == "accelerator" and c.state == "OK"
    ]
    end = warmup_end(started_at, completions, busy)
    if end is None or started_at is None:
        return None, None
    warmup_usd = sum(
        (cost_inside(s, started_at, end, series, list_price=False) for s in segments),
        Decimal(0),
    )
    return whole_seconds(started_at, end), warmup_usd
