"""FOCUS charges of a job's day, from its ledger records: one charge per resource and
rate (instances per rate they ran at, each volume, each checkpoint object)."""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from shared.domain.checkpoint import GIB
from shared.domain.clock import MONTH_UNITS, SECONDS_PER_HOUR, month_clock, whole_seconds
from shared.domain.day_split import checkpoint_versions
from shared.domain.finance_day import utc_month_pieces
from shared.domain.instance import InstanceHead
from shared.domain.job import JobRecords
from shared.domain.rates import RatePin
from shared.domain.segments import SeriesReader
from shared.reports.focus import Charge, billing_period, charge_order, focus_row

RateKey = tuple[Decimal, Decimal, str, str]


def _instance_seconds(
    records: JobRecords, head: InstanceHead, lo: datetime, hi: datetime, now: datetime,
    series: SeriesReader | None,
) -> dict[RateKey, list[Decimal]]:  # fmt: skip
    """Billed and used seconds inside the day, per rate: a spot series splits at its price
    changes; a segment's billing minimum is billed (not used) when it closes."""
    out: dict[RateKey, list[Decimal]] = {}
    for seg in records.all_segments():
        if seg.instance_id != head.instance_id or seg.pin is None:
            continue
        pin = seg.pin
        end = seg.span.end if seg.span.end is not None else now
        a, b = max(lo, seg.span.start), min(hi, end)

        def add(
            list_usd: Decimal, eff_usd: Decimal, billed: Decimal, used: Decimal, pin: RatePin = pin
        ) -> None:
            key = (list_usd, eff_usd, pin.source.value, pin.checked_on)
            bucket = out.setdefault(key, [Decimal(0), Decimal(0)])
            bucket[0] += billed
            bucket[1] += used

        if a < b:
            if pin.rate is not None:
                secs = Decimal(whole_seconds(a, b))
                add(pin.rate.list_usd, pin.rate.effective_usd, secs, secs)
            else:
                assert pin.series is not None and series is not None
                found = series.get(pin.series)  # type: ignore[attr-defined]
                bounds = [a, *(p.at for p in found.points if a < p.at < b), b]
                for x, y in itertools.pairwise(bounds):
                    rate = series.rate_at(pin.series, x)
                    secs = Decimal(whole_seconds(x, y))
                    add(rate, rate, secs, secs)
        if seg.span.end is not None and lo < seg.span.end <= hi:
            extra = seg.billed_seconds - whole_seconds(seg.span.start, seg.span.end)
            if extra > 0:
                if pin.rate is not None:
                    add(pin.rate.list_usd, pin.rate.effective_usd, Decimal(extra), Decimal(0))
                elif series is not None and pin.series is not None:
                    rate = series.rate_at(pin.series, seg.span.end)
                    add(rate, rate, Decimal(extra), Decimal(0))
    return out


def _months(a: datetime, b: datetime) -> Decimal:
    return Decimal(month_clock(b) - month_clock(a)) / MONTH_UNITS


def job_charges(
    records: JobRecords,
    day_start: datetime,
    now: datetime,
    series: SeriesReader | None,
    day_end: datetime | None = None,
) -> list[Charge]:
    """The job's charges of one finance day [day_start, day_end) (default: 24 hours), cut
    at a UTC month start inside it: each row lies in one UTC billing period."""
    end = day_end if day_end is not None else day_start + timedelta(days=1)
    charges: list[Charge] = []
    for lo, hi in utc_month_pieces(day_start, end):
        charges += _window_charges(records, lo, hi, now, series)
    return sorted(charges, key=charge_order)


def _window_charges(
    records: JobRecords,
    day_start: datetime,
    day_end: datetime,
    now: datetime,
    series: SeriesReader | None,
) -> list[Charge]:
    hi_now = min(day_end, now)
    charges: list[Charge] = []
    account = next((str(r.get("account")) for r in records.rollups if r.get("account")), "")
    for head in records.heads:
        profile = head.profile
        spot = profile.lifecycle == "spot"
        for (list_usd, eff_usd, source, checked), (billed, used) in _instance_seconds(
            records, head, day_start, day_end, now, series
        ).items():
            charges.append(
                Charge(
                    kind="instance",
                    job_id=records.job_id,
                    account=profile.account,
                    region=profile.region,
                    availability_zone=profile.availability_zone or None,
                    resource_id=profile.instance_id,
                    resource_name=profile.tags.get("Name"),
                    period_start=day_start,
                    period_end=day_end,
                    pricing_quantity=billed / SECONDS_PER_HOUR,
                    consumed_quantity=used / SECONDS_PER_HOUR,
                    list_unit_price=list_usd,
                    contracted_unit_price=eff_usd,
                    list_cost=billed * list_usd / SECONDS_PER_HOUR,
                    contracted_cost=billed * eff_usd / SECONDS_PER_HOUR,
                    effective_cost=billed * eff_usd / SECONDS_PER_HOUR,
                    description=(
                        f"Estimated by costtracker from EC2 state events: {profile.instance_type} "
                        f"{profile.lifecycle} ({profile.platform}) running time"
                    ),
                    sku_id=f"{'SpotUsage' if spot else 'BoxUsage'}:{profile.instance_type}",
                    pricing_category="Dynamic" if spot else "Standard",
                    tags=profile.tags,
                    rate_source=source,
                    rate_checked_on=date.fromisoformat(checked),
                    capacity_reservation_id=profile.capacity_reservation_id or None,
                    capacity_reservation_status="Used" if profile.capacity_reservation_id else None,
                )
            )
        if head.first_running_at is not None:
            a = max(day_start, head.first_running_at)
            b = min(day_end, head.terminated_at or now)
            if a < b:
                rates = {r.volume_id: r for r in head.volume_rates}
                for volume in profile.volumes:
                    rate = rates.get(volume.volume_id)
                    if rate is None or rate.size is None:
                        continue
                    months = _months(a, b)
                    quantity = Decimal(volume.size_gib) * months
                    charges.append(
                        Charge(
                            kind="ebs_volume",
                            job_id=records.job_id,
                            account=profile.account,
                            region=profile.region,
                            availability_zone=profile.availability_zone or None,
                            resource_id=volume.volume_id,
                            period_start=day_start,
                            period_end=day_end,
                            pricing_quantity=quantity,
                            consumed_quantity=quantity,
                            list_unit_price=rate.size.list_usd,
                            contracted_unit_price=rate.size.effective_usd,
                            list_cost=rate.size.list_usd * quantity,
                            contracted_cost=rate.size.effective_usd * quantity,
                            effective_cost=rate.size.effective_usd * quantity,
                            description=(
                                f"Estimated by costtracker: EBS {volume.volume_type} "
                                f"{volume.size_gib} GiB attached to {profile.instance_id}"
                            ),
                            sku_id=f"EBS:VolumeUsage.{volume.volume_type}",
                            tags=profile.tags,
                            rate_source=rate.size.source.value,
                            rate_checked_on=rate.size.checked_on,
                        )
                    )
    objects: dict[str, dict[str, Any]] = {}
    for ckpt, version in checkpoint_versions(records):
        if ckpt is None or ckpt.rate is None:
            continue
        a, b = max(day_start, version.start), min(hi_now, version.end or now)
        alive = version.start < day_end and (version.end is None or version.end > day_start)
        if not alive:
            continue
        entry = objects.setdefault(
            f"{ckpt.bucket}/{ckpt.key}",
            {"head": ckpt, "quantity": Decimal(0), "largest": 0},
        )
        entry["largest"] = max(entry["largest"], version.size_bytes)
        if a < b:
            entry["quantity"] += Decimal(version.size_bytes) / GIB * _months(a, b)
    for entry in objects.values():
        ckpt = entry["head"]
        quantity = entry["quantity"]
        rate = ckpt.rate
        step = f" step {ckpt.step}" if ckpt.step is not None else ""
        charges.append(
            Charge(
                kind="checkpoint_storage",
                job_id=records.job_id,
                account=ckpt.account or account,
                region=ckpt.region,
                resource_id=f"arn:aws:s3:::{ckpt.bucket}/{ckpt.key}",
                resource_name=ckpt.key,
                period_start=day_start,
                period_end=day_end,
                pricing_quantity=quantity,
                consumed_quantity=quantity,
                list_unit_price=rate.list_usd,
                contracted_unit_price=rate.effective_usd,
                list_cost=rate.list_usd * quantity,
                contracted_cost=rate.effective_usd * quantity,
                effective_cost=rate.effective_usd * quantity,
                description=(
                    f"Estimated by costtracker from S3 events: checkpoint object{step} "
                    f"({Decimal(entry['largest']) / GIB:.3f} GiB)"
                ),
                sku_id="TimedStorage-ByteHrs",
                rate_source=rate.source.value,
                rate_checked_on=rate.checked_on,
            )
        )
    if records.training or records.reservations:
        from shared.reports.focus_managed import managed_charges

        charges += managed_charges(records, day_start, now, day_end)
    if records.file_systems:
        from shared.reports.focus_fsx import file_system_charges

        charges += file_system_charges(records, day_start, day_end, now)
    return [c if c.account else replace(c, account=account or "unknown") for c in charges]


def focus_rows(
    records: JobRecords,
    day_start: datetime,
    now: datetime,
    series: SeriesReader | None,
    day_end: datetime | None = None,
) -> list[dict[str, Any]]:
    """The job's FOCUS rows for one finance day: running time, volumes, checkpoint objects,
    managed training, reservations and file systems."""
    charges = job_charges(records, day_start, now, series, day_end)
    # The job's charges share a few starts (one per UTC month piece of the day).
    billing = {start: billing_period(start) for start in {c.period_start for c in charges}}
    return [focus_row(c, billing[c.period_start]) for c in charges]
