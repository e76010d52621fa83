"""Pure cost rules for reserved capacity (docs/cost-rules.md "Managed training and reserved
capacity").
Decimal money, the clock passed in, no AWS code; an unknown price is None, never 0.

Reservations (``reservation_cost``), over the instance spans the ledger saw in the
reservation:
- Capacity Block: the upfront fee spread evenly over its reserved instance-seconds; an instance
  costs fee x its seconds / (count x block seconds) (no 60-second minimum), plus any hourly OS
  fee; unused reserved instance-seconds (count x elapsed block seconds - used), accrued to now,
  are ``wasted_reserved`` at the same share;
- ODCR: instances bill at the on-demand rate as usual (the ledger's rule 1, not here); unused
  reserved instance-seconds are ``wasted_reserved`` at the on-demand rate;
- ``wasted_reserved`` goes to the reservation's job tag, else ``reservation:<id>``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

from shared.domain.base import Frozen
from shared.domain.managed.costs_common import (
    DEFAULT_JOB_TAG_KEYS,
    HOUR,
    first_job_tag,
    whole_seconds,
)
from shared.domain.managed.models import CapacityReservation, ReservationUse


def reservation_job_id(
    reservation: CapacityReservation, job_tag_keys: Sequence[str] = DEFAULT_JOB_TAG_KEYS
) -> str:
    """Whom the unused reserved time is charged to: the reservation's job tag, else
    ``reservation:<id>``."""
    return (
        first_job_tag(reservation.tags, job_tag_keys) or f"reservation:{reservation.reservation_id}"
    )


def _window(
    reservation: CapacityReservation, now: datetime, since: datetime | None = None
) -> tuple[datetime, datetime]:
    """The part of the reserved window that has passed at ``now`` (from ``since``, if later)."""
    start = reservation.start if since is None else max(reservation.start, since)
    end = now if reservation.end is None else min(reservation.end, now)
    return start, max(start, end)


class ReservationUsage(Frozen):
    """Reserved and used instance-seconds of a reservation over the window that has passed."""

    reservation_id: str
    window_start: datetime
    window_end: datetime
    reserved_instance_seconds: int
    used_instance_seconds: int
    unused_instance_seconds: int
    used_by_job: dict[str, int]
    running_now: int

    @property
    def utilization(self) -> Decimal | None:
        """Used / reserved, None before the window opens."""
        if self.reserved_instance_seconds == 0:
            return None
        return Decimal(self.used_instance_seconds) / Decimal(self.reserved_instance_seconds)


def reservation_usage(
    reservation: CapacityReservation,
    uses: Iterable[ReservationUse],
    now: datetime,
    *,
    since: datetime | None = None,
) -> ReservationUsage:
    """Instance-seconds reserved, used (each span clipped to the window, a started second
    whole, no minimum) and unused, from the reservation's start (or ``since``) to ``now`` (or
    its end). Used time above the reserved count cannot be reserved time: unused is never
    below 0."""
    start, end = _window(reservation, now, since)
    reserved = reservation.instance_count * whole_seconds(start, end)
    open_now = reservation.start <= now and (reservation.end is None or now < reservation.end)
    by_job: dict[str, int] = {}
    running_now = 0
    for use in uses:
        use_end = now if use.end is None else min(use.end, now)
        seconds = whole_seconds(max(use.start, start), min(use_end, end))
        by_job[use.job_id] = by_job.get(use.job_id, 0) + seconds
        if open_now and use.start <= now and (use.end is None or use.end > now):
            running_now += 1
    used = sum(by_job.values())
    return ReservationUsage(
        reservation_id=reservation.reservation_id,
        window_start=start,
        window_end=end,
        reserved_instance_seconds=reserved,
        used_instance_seconds=min(used, reserved),
        unused_instance_seconds=max(reserved - used, 0),
        used_by_job=dict(sorted(by_job.items())),
        running_now=min(running_now, reservation.instance_count),
    )


class JobReservationCharge(Frozen):
    """What one job's instances used of a reservation. ``instance_usd`` is the Capacity Block
    share (+ OS fee) that replaces the on-demand rate; None for an ODCR (its instances bill at
    the on-demand rate by the usual rule) or when the fee is unknown."""

    job_id: str
    instance_seconds: int
    instance_usd: Decimal | None


class ReservationCost(Frozen):
    reservation_id: str
    kind: Literal["capacity-block", "odcr"]
    usage: ReservationUsage
    # Capacity Block: fee / (count x block seconds); ODCR: on-demand rate / 3600.
    usd_per_instance_second: Decimal | None
    by_job: tuple[JobReservationCharge, ...]
    wasted_job_id: str
    wasted_reserved_usd: Decimal | None
    unpriced: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        return not self.unpriced


def block_fee(
    reservation: CapacityReservation,
    *,
    fees_by_id: Mapping[str, Decimal],
    hourly_by_type: Mapping[str, Decimal] | None = None,
) -> Decimal | None:
    """A Capacity Block's upfront fee from configuration: by reservation id, else the
    configured effective $/instance-hour of its type x count x block hours; None (unpriced)
    when neither is configured."""
    if reservation.reservation_id in fees_by_id:
        return fees_by_id[reservation.reservation_id]
    hourly = (hourly_by_type or {}).get(reservation.instance_type)
    if hourly is None or reservation.block_seconds is None:
        return None
    return hourly * reservation.instance_count * Decimal(reservation.block_seconds) / HOUR


def capacity_block_cost(
    reservation: CapacityReservation,
    uses: Iterable[ReservationUse],
    now: datetime,
    *,
    fee_usd: Decimal | None,
    os_hourly_usd: Decimal = Decimal(0),
    job_tag_keys: Sequence[str] = DEFAULT_JOB_TAG_KEYS,
) -> ReservationCost:
    """A Capacity Block's fee as job costs and ``wasted_reserved`` (module docstring)."""
    if reservation.kind != "capacity-block" or reservation.block_seconds is None:
        raise ValueError(f"{reservation.reservation_id} is not a Capacity Block")
    usage = reservation_usage(reservation, uses, now)
    total_instance_seconds = reservation.instance_count * reservation.block_seconds
    unpriced: tuple[str, ...] = ()
    share: Decimal | None = None
    if fee_usd is not None and total_instance_seconds > 0:
        share = fee_usd / Decimal(total_instance_seconds)
    if fee_usd is None:
        unpriced = (
            f"capacity block fee {reservation.reservation_id} ({reservation.instance_type})",
        )

    def fee_part(seconds: int) -> Decimal | None:
        if fee_usd is None:
            return None
        if total_instance_seconds == 0:
            return Decimal(0)
        # fee x seconds / total, not a rounded share x seconds: the parts add up to the fee.
        return fee_usd * Decimal(seconds) / Decimal(total_instance_seconds)

    by_job = []
    for job_id, seconds in usage.used_by_job.items():
        part = fee_part(seconds)
        instance_usd = None if part is None else part + os_hourly_usd * Decimal(seconds) / HOUR
        by_job.append(
            JobReservationCharge(job_id=job_id, instance_seconds=seconds, instance_usd=instance_usd)
        )
    return ReservationCost(
        reservation_id=reservation.reservation_id,
        kind="capacity-block",
        usage=usage,
        usd_per_instance_second=share,
        by_job=tuple(by_job),
        wasted_job_id=reservation_job_id(reservation, job_tag_keys),
        wasted_reserved_usd=fee_part(usage.unused_instance_seconds),
        unpriced=unpriced,
    )


def odcr_cost(
    reservation: CapacityReservation,
    uses: Iterable[ReservationUse],
    now: datetime,
    *,
    on_demand_hourly_usd: Decimal | None,
    job_tag_keys: Sequence[str] = DEFAULT_JOB_TAG_KEYS,
) -> ReservationCost:
    """An ODCR's unused reserved instance-seconds at the on-demand rate, as ``wasted_reserved``
    (its instances' own cost is the usual on-demand rule, so ``by_job`` carries no money)."""
    usage = reservation_usage(reservation, uses, now)
    wasted: Decimal | None = None
    unpriced: tuple[str, ...] = ()
    if on_demand_hourly_usd is None:
        unpriced = (f"on-demand {reservation.instance_type} for ODCR {reservation.reservation_id}",)
    else:
        wasted = Decimal(usage.unused_instance_seconds) * on_demand_hourly_usd / HOUR
    return ReservationCost(
        reservation_id=reservation.reservation_id,
        kind="odcr",
        usage=usage,
        usd_per_instance_second=None
        if on_demand_hourly_usd is None
        else on_demand_hourly_usd / HOUR,
        by_job=tuple(
            JobReservationCharge(job_id=j, instance_seconds=s, instance_usd=None)
            for j, s in usage.used_by_job.items()
        ),
        wasted_job_id=reservation_job_id(reservation, job_tag_keys),
        wasted_reserved_usd=wasted,
        unpriced=unpriced,
    )


def reservation_cost(
    reservation: CapacityReservation,
    uses: Iterable[ReservationUse],
    now: datetime,
    *,
    fee_usd: Decimal | None = None,
    on_demand_hourly_usd: Decimal | None = None,
    os_hourly_usd: Decimal = Decimal(0),
    job_tag_keys: Sequence[str] = DEFAULT_JOB_TAG_KEYS,
) -> ReservationCost:
    """``capacity_block_cost`` or ``odcr_cost`` by the reservation's kind."""
    if reservation.kind == "capacity-block":
        return capacity_block_cost(
            reservation,
            uses,
            now,
            fee_usd=fee_usd,
            os_hourly_usd=os_hourly_usd,
            job_tag_keys=job_tag_keys,
        )
    return odcr_cost(
        reservation, uses, now, on_demand_hourly_usd=on_demand_hourly_usd, job_tag_keys=job_tag_keys
    )


class BlockForecast(Frozen):
    """The unused share of a whole block, projected from ``as_of`` to its end.

    At the current pace: the instances running at ``as_of`` keep running to the end and no
    other starts. At the average pace: the rest of the block is used as the past of it was.
    """

    reservation_id: str
    as_of: datetime
    reserved_instance_seconds: int
    unused_so_far_instance_seconds: int
    remaining_seconds: int
    running_now: int
    unused_instance_seconds_at_current_pace: int
    unused_fraction_at_current_pace: Decimal
    unused_fraction_at_average_pace: Decimal

    @property
    def unused_percent_at_current_pace(self) -> int:
        return int((self.unused_fraction_at_current_pace * 100).quantize(Decimal(1), ROUND_HALF_UP))

    def message(self) -> str:
        return (
            f"you will leave {self.unused_percent_at_current_pace} % of this block unused "
            "at the current pace"
        )


def block_forecast(
    reservation: CapacityReservation, uses: Iterable[ReservationUse], now: datetime
) -> BlockForecast | None:
    """The forecast of unused reserved time for the rest of the block; None for an
    open-ended ODCR (no end to forecast to) or before the block starts (no pace yet)."""
    if reservation.block_seconds is None or reservation.end is None or now <= reservation.start:
        return None
    usage = reservation_usage(reservation, list(uses), now)
    total = reservation.instance_count * reservation.block_seconds
    if total == 0:
        return None
    remaining = whole_seconds(now, reservation.end)
    idle_ahead = (reservation.instance_count - usage.running_now) * remaining
    unused_current = usage.unused_instance_seconds + idle_ahead
    average_used = usage.utilization if usage.utilization is not None else Decimal(0)
    return BlockForecast(
        reservation_id=reservation.reservation_id,
        as_of=now,
        reserved_instance_seconds=total,
        unused_so_far_instance_seconds=usage.unused_instance_seconds,
        remaining_seconds=remaining,
        running_now=usage.running_now,
        unused_instance_seconds_at_current_pace=unused_current,
        unused_fraction_at_current_pace=Decimal(unused_current) / Decimal(total),
        unused_fraction_at_average_pace=1 - average_used,
    )


def daily_utilization(
    reservation: CapacityReservation, uses: Iterable[ReservationUse], day: date
) -> Decimal | None:
    """Used / reserved instance-seconds over one UTC day (for the ``reservation_underused``
    alert); None when the reservation reserved nothing that day."""
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    usage = reservation_usage(reservation, uses, start + timedelta(days=1), since=start)
    return usage.utilization
