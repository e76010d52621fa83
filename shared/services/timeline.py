"""A job's cumulative cost over time, split by component (for plotting).

Each segment, instance (its EBS volumes) and checkpoint version is priced once it lies
wholly before a point and kept for every later point; only those still running at a
point are priced there, so the series costs about (points + records), not points x
records. Each point is the sum ``shared.domain.day_split.job_between`` makes over
(start - 1 s, point], in the same order, so the figures are the same to the last digit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from shared.domain.checkpoint import GIB
from shared.domain.day_split import checkpoint_versions, ebs_weight, month_share
from shared.domain.fsx import fsx_between
from shared.domain.job import JobRecords
from shared.domain.managed.reservation import wasted_between
from shared.domain.managed.training import training_between
from shared.domain.segments import SegmentCost, SeriesReader, cost_inside, minimum_extra
from shared.reports.formatting import iso, money

if TYPE_CHECKING:
    from shared.services.deps import LedgerDeps

ZERO = Decimal(0)


@dataclass
class _Part:
    """One record's cost inside (lo, hi]: [lo's side, end] once hi is past its end."""

    start: datetime
    end: datetime | None  # None: open (runs to now)
    settled: tuple[Decimal, ...] | None = None


@dataclass
class _Accrual:
    records: JobRecords
    lo: datetime
    now: datetime
    series: SeriesReader | None
    segments: list[tuple[SegmentCost, _Part]] = field(default_factory=list)
    volumes: list[tuple[Decimal, _Part]] = field(default_factory=list)
    versions: list[tuple[Decimal, _Part]] = field(default_factory=list)

    def __post_init__(self) -> None:
        for seg in self.records.all_segments():
            end = seg.span.end if seg.span.end is not None else self.now
            if seg.priced and end > self.lo:
                self.segments.append((seg, _Part(seg.span.start, seg.span.end)))
        for head in self.records.heads:
            if head.first_running_at is not None:
                weight, _ = ebs_weight(head)
                end = head.terminated_at or self.now
                self.volumes.append((weight, _Part(max(self.lo, head.first_running_at), end)))
        for ckpt, version in checkpoint_versions(self.records):
            if ckpt is not None and ckpt.rate is not None:
                weight = ckpt.rate.effective_usd * version.size_bytes / GIB
                end = version.end or self.now
                self.versions.append((weight, _Part(max(self.lo, version.start), end)))

    def _instance(self, hi: datetime) -> Decimal:
        total = ZERO
        for seg, part in self.segments:
            if part.settled is None:
                if part.start >= hi:
                    continue
                running = cost_inside(seg, self.lo, hi, self.series, list_price=False)
                if part.end is None or part.end > hi:
                    total += running
                    continue
                part.settled = (running, minimum_extra(seg, self.series, list_price=False))
            for piece in part.settled:
                total += piece
        return total

    def _storage(self, parts: list[tuple[Decimal, _Part]], hi: datetime) -> Decimal:
        total = ZERO
        for weight, part in parts:
            if part.settled is None:
                b = min(hi, part.end or self.now)
                if b <= part.start:
                    continue
                share = month_share(weight, part.start, b)
                if b == part.end:  # wholly before hi: the same at every later point
                    part.settled = (share,)
                total += share
                continue
            total += part.settled[0]
        return total

    def at(self, hi: datetime) -> dict[str, Decimal]:
        """Costs inside (lo, hi]: instance, EBS, checkpoint storage and their total (with
        SageMaker training and unused reservations, as the day split adds them)."""
        hi = min(hi, self.now)
        out = {"instance": ZERO, "ebs": ZERO, "checkpoint_storage": ZERO, "total": ZERO}
        if hi <= self.lo:
            return out
        out["instance"] += self._instance(hi)
        out["ebs"] += self._storage(self.volumes, hi)
        out["checkpoint_storage"] += self._storage(self.versions, hi)
        out["total"] = out["instance"] + out["ebs"] + out["checkpoint_storage"]
        if self.records.training or self.records.reservations:
            managed = {"ml_storage": ZERO, "warm_pool": ZERO, "wasted_reserved": ZERO}
            for head in self.records.training:
                parts = training_between(head, self.lo, hi, self.now)
                out["instance"] += parts["instance"]
                managed["ml_storage"] += parts["ml_storage"]
                managed["warm_pool"] += parts["warm_pool"]
            for reservation in self.records.reservations:
                managed["wasted_reserved"] += wasted_between(reservation, self.lo, hi)
            out["total"] = out["instance"] + out["ebs"] + out["checkpoint_storage"]
            m = managed
            out["total"] += m["ml_storage"] + m["warm_pool"] + m["wasted_reserved"]
        if self.records.file_systems:  # FSx for Lustre, as the day split adds it
            out["fsx"] = sum(
                (fsx_between(fs, self.lo, hi, self.now)[0] for fs in self.records.file_systems),
                ZERO,
            )
            out["total"] += out["fsx"]
        return out


def cumulative_points(
    records: JobRecords,
    start: datetime,
    now: datetime,
    points: int,
    series: SeriesReader | None,
) -> list[dict[str, Any]]:
    """``points`` evenly spaced times from ``start`` to ``now``; at each, the cost accrued
    since the start: instance, EBS, checkpoint storage and their total (the last point
    equals the job's total). ``records`` must hold the sealed records since ``start``."""
    accrual = _Accrual(records, start - timedelta(seconds=1), now, series)
    out = []
    for n in range(points):
        at = start + (now - start) * n / (points - 1) if points > 1 else now
        inside = accrual.at(at)
        out.append(
            {
                "at": iso(at),
                "total_usd": money(inside["total"]),
                "instance_usd": money(inside["instance"]),
                "ebs_usd": money(inside["ebs"]),
                "checkpoint_storage_usd": money(inside["checkpoint_storage"]),
            }
        )
    return out


def job_timeline(
    deps: LedgerDeps, records: JobRecords, started_at: datetime | None, now: datetime, points: int
) -> list[dict[str, Any]]:
    """The timeline of a job from its start (now, when it has none) to now: its sealed
    records since the start are read first (one Query)."""
    from shared.adapters.job_records import load_sealed

    start = started_at or now
    load_sealed(deps.table, records, start)
    return cumulative_points(records, start, now, points, deps.prices.series)
