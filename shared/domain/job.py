"""A job's cost at a moment (cost rules 5-9), from its records: instance and checkpoint
heads, its rollups, and the sealed records a question needs (rerun windows, day splits).

Totals come from the rollups (the sum of every record's accrual); rerun waste
(rule 5) is computed over the job's segments inside its interruption windows.
Everything is accrued to ``now`` (the clock is passed in).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Literal

from shared.domain import accrual as acc
from shared.domain.accrual import Accrual
from shared.domain.base import Frozen
from shared.domain.checkpoint import CheckpointHead, Version
from shared.domain.fsx import FileSystemHead
from shared.domain.idle import IdleEpisode
from shared.domain.instance import CostWarning, InstanceHead
from shared.domain.lifecycle import Notice
from shared.domain.managed.reservation import ReservationHead, ReservationView
from shared.domain.managed.training import TrainingHead
from shared.domain.segments import SegmentCost, SeriesReader, cost_inside
from shared.domain.utilization import Measured

ClockFn = Callable[[str, datetime], Decimal]
Status = Literal["running", "stopped", "interrupted", "complete"]

# Charges the events cannot see, and how each will be confirmed (rule 7).
UNCONFIRMED_ITEMS: dict[str, str] = {
    "data_transfer": "Cost Explorer (by the job tag) or Data Exports (by resource) once the "
    "bill for the day is final",
    "cloudwatch": "Cost Explorer (AmazonCloudWatch) by tag, once the bill for the day is final",
}


@dataclass
class JobRecords:
    """What the ledger holds for one job (sealed records only where loaded)."""

    job_id: str
    rollups: list[dict[str, Any]] = field(default_factory=list)
    heads: list[InstanceHead] = field(default_factory=list)
    checkpoints: list[CheckpointHead] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)
    notices: list[tuple[str, Notice]] = field(default_factory=list)  # (instance id, notice)
    segments: list[SegmentCost] = field(default_factory=list)  # sealed, loaded range
    versions: list[tuple[CheckpointHead | None, dict[str, Any], Version]] = field(
        default_factory=list
    )
    idle: list[tuple[str, IdleEpisode]] = field(default_factory=list)
    loaded_since: datetime | None = None  # sealed records ending at or after this are here
    # SageMaker training heads of the job, and the reservations charging it unused time.
    training: list[TrainingHead] = field(default_factory=list)
    reservations: list[ReservationHead] = field(default_factory=list)
    # Measured utilization of each instance so far, by (account, instance id) (rule 10).
    measured: dict[tuple[str, str], Measured] = field(default_factory=dict)
    # FSx for Lustre file systems of the job (cost rule 13).
    file_systems: list[FileSystemHead] = field(default_factory=list)

    def accrual(self) -> Accrual:
        return acc.total(acc.from_attributes(r) for r in self.rollups)

    def all_segments(self) -> list[SegmentCost]:
        """Loaded sealed segments and the heads' window segments, each once."""
        seen: dict[tuple[str, str], SegmentCost] = {}
        for seg in self.segments:
            seen[(seg.instance_id, seg.span.key)] = seg
        for head in self.heads:
            for seg in head.segments:
                seen[(head.instance_id, seg.span.key)] = seg
        return sorted(seen.values(), key=lambda s: (s.span.start, s.instance_id))


class InstanceSummary(Frozen):
    instance_id: str
    instance_type: str
    account: str
    region: str
    lifecycle: str
    instance_usd: Decimal
    instance_list_usd: Decimal
    ebs_usd: Decimal
    billed_seconds: int
    running_since: datetime | None
    burn_usd_per_hour: Decimal
    terminated: bool
    inferred: bool
    segments: tuple[SegmentCost, ...]


class JobCost(Frozen):
    job_id: str
    as_of: datetime
    tags: dict[str, str]
    tag_conflicts: dict[str, tuple[str, ...]]
    accounts: tuple[str, ...]
    status: Status
    instances: tuple[InstanceSummary, ...]
    instance_usd: Decimal
    instance_list_usd: Decimal
    ebs_usd: Decimal
    checkpoint_storage_usd: Decimal
    wasted_rerun_usd: Decimal
    wasted_rerun_list_usd: Decimal
    wasted_idle_usd: Decimal
    wasted_idle_list_usd: Decimal
    burn_rate_usd_per_hour: Decimal
    billed_seconds: int
    started_at: datetime | None
    unconfirmed: tuple[str, ...]
    unpriced: tuple[str, ...]  # "kind:type:region"
    price_sources: tuple[str, ...]
    warnings: tuple[CostWarning, ...]
    checkpoints: int = 0
    checkpoint_objects: int = 0
    last_checkpoint_at: datetime | None = None
    last_checkpoint_step: int | None = None
    interruptions: int = 0
    rebalance_recommendations: int = 0
    spend_at_risk_usd: Decimal = Decimal(0)
    cost_per_1k_steps_usd: Decimal | None = None
    steps_per_hour: Decimal | None = None
    cost_per_million_tokens_usd: Decimal | None = None
    tokens_per_step: int | None = None
    checkpoint_cadence_seconds: int | None = None
    idle_seconds: int = 0
    warmup_seconds: int | None = None
    warmup_usd: Decimal | None = None
    # Managed training and reserved capacity (charges of their own, in ``total``).
    ml_storage_usd: Decimal = Decimal(0)
    warm_pool_usd: Decimal = Decimal(0)
    wasted_reserved_usd: Decimal = Decimal(0)
    managed_spot_saving: Decimal | None = None
    training_jobs: tuple[str, ...] = ()
    reservations: tuple[ReservationView, ...] = ()
    has_training: bool = False
    has_reservation: bool = False
    # Rule 10: None where not measured (no datapoint) or an accelerator count is unknown.
    accelerator_seconds: int | None = None
    utilization: Decimal | None = None
    utilization_measured_share: Decimal | None = None
    effective_accelerator_hours: Decimal | None = None
    accelerator_counts_unknown: tuple[str, ...] = ()
    # FSx for Lustre storage (a charge of its own, in ``total``).
    fsx_usd: Decimal = Decimal(0)
    file_systems: tuple[str, ...] = ()

    @property
    def managed_usd(self) -> Decimal:
        return self.ml_storage_usd + self.warm_pool_usd + self.wasted_reserved_usd

    @property
    def total_usd(self) -> Decimal:
        return (
            self.instance_usd
            + self.ebs_usd
            + self.checkpoint_storage_usd
            + self.managed_usd
            + self.fsx_usd
        )

    @property
    def list_total_usd(self) -> Decimal:
        return (
            self.instance_list_usd
            + self.ebs_usd
            + self.checkpoint_storage_usd
            + self.managed_usd
            + self.fsx_usd
        )

    @property
    def complete(self) -> bool:
        return not self.unpriced


def parse_time(value: Any) -> datetime | None:
    if not value:
        return None
    return datetime.fromisoformat(str(value)).astimezone(UTC)


def merge_windows(windows: Sequence[tuple[datetime, datetime]]) -> list[tuple[datetime, datetime]]:
    merged: list[tuple[datetime, datetime]] = []
    for start, end in sorted(w for w in windows if w[0] < w[1]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def checkpoint_marks(steps: Sequence[dict[str, Any]], marker: bool) -> list[tuple[datetime, str]]:
    """(time, step) of each checkpoint: a step is complete at its latest write (or at its
    marker's write, where a completion marker is configured)."""
    out = []
    for item in steps:
        at = parse_time(item.get("complete_at") if marker else item.get("last_write"))
        if at is not None:
            out.append((at, str(item.get("step", ""))))
    return sorted(out)


def write_times(steps: Sequence[dict[str, Any]], marker: bool) -> list[datetime]:
    """The checkpoint writes of the steps, in time order: each step's first and last
    write (its marker's write, where a completion marker is configured)."""
    names = ("complete_at",) if marker else ("last_write", "first_write")
    times = []
    for item in steps:
        for name in names:
            value = parse_time(item.get(name))
            if value is not None:
                times.append(value)
    return sorted(times)


def last_write_before(times: Sequence[datetime], at: datetime) -> datetime | None:
    """The latest of ``times`` (in order, as ``write_times`` gives them) at or before ``at``."""
    before = bisect_right(times, at)
    return times[before - 1] if before else None


def rerun_windows(
    records: JobRecords, now: datetime, marker: bool
) -> list[tuple[datetime, datetime]]:
    """Rule 5: per interruption warning, [last checkpoint write before it (job start if
    none), end of the interrupted segment (now if it runs)], merged."""
    segments = records.all_segments()
    starts = [s.span.start for s in segments]
    job_start = min(starts, default=None)
    windows = []
    times: list[datetime] | None = None  # the job's writes, read once for every notice
    for instance_id, notice in records.notices:
        segment = next(
            (
                s
                for s in segments
                if s.instance_id == instance_id
                and s.span.start <= notice.at
                and (s.span.end is None or notice.at <= s.span.end)
            ),
            None,
        )
        if segment is None:
            continue
        if times is None:
            times = write_times(records.steps, marker)
        start = last_write_before(times, notice.at) or job_start or segment.span.start
        windows.append((start, segment.span.end if segment.span.end is not None else now))
    return merge_windows(windows)


def cost_in_windows(
    segments: Sequence[SegmentCost],
    windows: Sequence[tuple[datetime, datetime]],
    series: SeriesReader | None,
    *,
    list_price: bool,
) -> Decimal:
    total = Decimal(0)
    for seg in segments:
        for lo, hi in windows:
            total += cost_inside(seg, lo, hi, series, list_price=list_price)
    return total


# A rollup keeps each grouping key apart: ``tag:<key>`` holds the value of the earliest
# record carrying the key, ``tag_from:<key>`` when that record first ran
# (``<ISO time>#<instance id, training job name or reservation id>``, so it sorts).
TAG, TAG_FROM = "tag:", "tag_from:"


def _tag_claims(rollup: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """key -> (since, value) of one rollup; a rollup written before tags were kept per
    key holds its first record's whole tag set under ``tags`` / ``tags_from``."""
    claims = {
        name[len(TAG) :]: (str(rollup.get(TAG_FROM + name[len(TAG) :], "~")), str(value))
        for name, value in rollup.items()
        if name.startswith(TAG)
    }
    if not claims and rollup.get("tags"):
        since = str(rollup.get("tags_from", "~"))
        claims = {str(k): (since, str(v)) for k, v in dict(rollup["tags"]).items()}
    return claims


def rollup_tags(
    rollups: Sequence[dict[str, Any]],
) -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """The job's grouping tags, each key from the earliest-running record that carries it
    (ties by the record's id), and the keys whose records disagree (``tag_conflict``)."""
    chosen: dict[str, tuple[str, str]] = {}
    for rollup in rollups:
        for key, claim in _tag_claims(rollup).items():
            if key not in chosen or claim < chosen[key]:
                chosen[key] = claim
    tags = {key: value for key, (_, value) in sorted(chosen.items())}
    seen: dict[str, set[str]] = {}
    for rollup in rollups:
        for entry in rollup.get("tag_values", set()) or set():
            key, _, value = str(entry).partition("=")
            seen.setdefault(key, set()).add(value)
    conflicts = {
        k: tuple([tags[k], *sorted(v - {tags[k]})]) if k in tags else tuple(sorted(v))
        for k, v in seen.items()
        if len(v) > 1
    }
    return tags, conflicts


def status_of(a: Accrual, rollups: Sequence[dict[str, Any]], now: datetime) -> Status:
    last_warning = max((str(r.get("last_warning_at", "")) for r in rollups), default="")
    last_running = max((str(r.get("last_running_at", "")) for r in rollups), default="")
    running = a.value("n_running", now) > 0
    instances = a.value("n_instances", now)
    if last_warning and last_warning >= last_running:
        return "interrupted"
    if running:
        return "running"
    if instances and a.value("n_terminated", now) >= instances:
        return "complete"
    return "stopped"


def _span(cost: JobCost) -> tuple[datetime, datetime] | None:
    """From the job's first start to its last instance's stop (``as_of`` while one runs)."""
    if cost.started_at is None:
        return None
    end = ended_at(cost) or cost.as_of
    return cost.started_at, max(cost.started_at, end)


def ended_at(cost: JobCost) -> datetime | None:
    """When the job's last instance stopped running; None while one runs (the latest
    segment of every instance is always in its head's window)."""
    if any(i.running_since is not None for i in cost.instances):
        return None
    ends = [s.span.end for i in cost.instances for s in i.segments if s.span.end is not None]
    return max(ends, default=None)


def wall_clock_seconds(cost: JobCost) -> int:
    """Elapsed time from the job's first start to its last stop (or now): not the
    instance-hours, which add up every instance's time."""
    span = _span(cost)
    return int((span[1] - span[0]).total_seconds()) if span else 0
