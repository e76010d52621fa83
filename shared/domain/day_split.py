"""A job's costs inside a window (a finance day, a budget period): split to the second,
each segment's billing minimum on the moment it closed, so consecutive windows add
up to the job's totals."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from shared.domain.checkpoint import GIB, CheckpointHead, Version
from shared.domain.clock import MONTH_UNITS, month_clock
from shared.domain.ebs import provisioned_iops, provisioned_throughput
from shared.domain.fsx import fsx_between
from shared.domain.instance import InstanceHead
from shared.domain.job import JobRecords, cost_in_windows, rerun_windows
from shared.domain.managed.reservation import wasted_between
from shared.domain.managed.training import training_between
from shared.domain.segments import SegmentCost, SeriesReader, cost_inside, minimum_extra

KINDS = ("instance", "ebs", "checkpoint_storage", "wasted_rerun", "wasted_idle")
MANAGED_KINDS = ("ml_storage", "warm_pool", "wasted_reserved")


def ebs_weight(head: InstanceHead) -> tuple[Decimal, bool]:
    rates = {r.volume_id: r for r in head.volume_rates}
    weight = Decimal(0)
    priced = True
    for volume in head.profile.volumes:
        rate = rates.get(volume.volume_id)
        if rate is None or rate.size is None:
            priced = False
            continue
        weight += rate.size.effective_usd * volume.size_gib
        iops = provisioned_iops(volume)
        if iops and rate.iops is not None:
            weight += rate.iops.effective_usd * iops
        throughput = provisioned_throughput(volume)
        if throughput and rate.throughput is not None:
            weight += rate.throughput.effective_usd * throughput
    return weight, priced


def month_share(weight: Decimal, a: datetime, b: datetime) -> Decimal:
    if b <= a or not weight:
        return Decimal(0)
    return weight * (month_clock(b) - month_clock(a)) / MONTH_UNITS


def checkpoint_versions(records: JobRecords) -> list[tuple[CheckpointHead | None, Version]]:
    seen: dict[tuple[str, str], tuple[CheckpointHead | None, Version]] = {}
    for head, item, version in records.versions:
        seen[(str(item.get("object")), version.write_event_id)] = (head, version)
    for head in records.checkpoints:
        for version in head.versions:
            seen[(f"s3://{head.bucket}/{head.key}", version.write_event_id)] = (head, version)
    return list(seen.values())


def job_between(
    records: JobRecords, lo: datetime, hi: datetime, now: datetime, series: SeriesReader | None
) -> tuple[dict[str, Decimal], bool]:
    """(costs inside (lo, hi], fully priced?) as the ledger knows them at ``now``."""
    hi = min(hi, now)
    out = dict.fromkeys(KINDS, Decimal(0))
    out["instance_list"] = Decimal(0)
    out["total"] = Decimal(0)
    priced = True
    if hi <= lo:
        return out, priced
    segments = records.all_segments()
    for seg in segments:
        end = seg.span.end if seg.span.end is not None else now
        if seg.span.start >= hi or end <= lo:
            continue
        if not seg.priced:
            priced = False
            continue
        out["instance"] += cost_inside(seg, lo, hi, series, list_price=False)
        out["instance_list"] += cost_inside(seg, lo, hi, series, list_price=True)
        if seg.span.end is not None and lo < seg.span.end <= hi:
            out["instance"] += minimum_extra(seg, series, list_price=False)
            out["instance_list"] += minimum_extra(seg, series, list_price=True)
    for head in records.heads:
        if head.first_running_at is None:
            continue
        end = head.terminated_at or now
        a, b = max(lo, head.first_running_at), min(hi, end)
        if b <= a:
            continue
        weight, volumes_priced = ebs_weight(head)
        priced = priced and volumes_priced
        out["ebs"] += month_share(weight, a, b)
    for ckpt, version in checkpoint_versions(records):
        end = version.end or now
        a, b = max(lo, version.start), min(hi, end)
        if b <= a:
            continue
        if ckpt is None or ckpt.rate is None:
            priced = False
            continue
        out["checkpoint_storage"] += month_share(
            ckpt.rate.effective_usd * version.size_bytes / GIB, a, b
        )
    by_key = {(s.instance_id, s.span.key): s for s in segments}
    episodes = list(records.idle) + [(h.instance_id, e) for h in records.heads for e in h.idle]
    for instance_id, episode in {(i, e.segment_key, e.start): (i, e) for i, e in episodes}.values():
        found = by_key.get((instance_id, episode.segment_key))
        if found is None:
            continue
        seg = found
        a, b = max(lo, episode.start), min(hi, episode.end or now)
        if b > a:
            out["wasted_idle"] += cost_inside(seg, a, b, series, list_price=False)
    windows = [
        (max(lo, a), min(hi, b)) for a, b in rerun_windows(records, now, False) if a < hi and b > lo
    ]
    out["wasted_rerun"] = cost_in_windows(segments, windows, series, list_price=False)
    out["total"] = out["instance"] + out["ebs"] + out["checkpoint_storage"]
    if records.training or records.reservations:
        priced = _managed_between(records, lo, hi, now, out) and priced
    if records.file_systems:
        out["fsx"] = Decimal(0)
        for fs in records.file_systems:
            usd, fs_priced = fsx_between(fs, lo, hi, now)
            out["fsx"] += usd
            priced = priced and fs_priced
        out["total"] += out["fsx"]
    return out, priced


def _managed_between(
    records: JobRecords, lo: datetime, hi: datetime, now: datetime, out: dict[str, Decimal]
) -> bool:
    """SageMaker training and unused reserved time inside (lo, hi], added to ``out``
    (keys ``ml_storage``, ``warm_pool``, ``wasted_reserved`` and the total)."""
    priced = True
    for key in MANAGED_KINDS:
        out.setdefault(key, Decimal(0))
    for head in records.training:
        priced = priced and head.rate is not None
        parts = training_between(head, lo, hi, now)
        out["instance"] += parts["instance"]
        out["instance_list"] += parts["instance"]
        out["ml_storage"] += parts["ml_storage"]
        out["warm_pool"] += parts["warm_pool"]
    for reservation in records.reservations:
        priced = priced and reservation.rate is not None
        out["wasted_reserved"] += wasted_between(reservation, lo, hi)
    out["total"] = out["instance"] + out["ebs"] + out["checkpoint_storage"]
    out["total"] += out["ml_storage"] + out["warm_pool"] + out["wasted_reserved"]
    return priced


def instance_between(
    seg_list: list[SegmentCost], lo: datetime, hi: datetime, series: SeriesReader | None
) -> Decimal:
    total = Decimal(0)
    for seg in seg_list:
        total += cost_inside(seg, lo, hi, series, list_price=False)
        if seg.span.end is not None and lo < seg.span.end <= hi:
            total += minimum_extra(seg, series, list_price=False)
    return total
