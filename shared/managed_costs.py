"""Pure cost rules for managed training and reserved capacity (SPEC "Managed training and
reserved capacity"). Decimal money, the clock passed in, no AWS code.

A price that is not known is ``None`` (``unpriced``), never 0: the part it prices is None,
what it would price is named in ``unpriced``, and the priced parts still add up ("at least").

SageMaker training job (``training_job_cost``):
- while ``InProgress``/``Stopping``: instance = count x rate x (now - TrainingStartTime) / 3600,
  an estimate (``billed`` False);
- at ``Completed``/``Failed``/``Stopped`` with DescribeTrainingJob's figures: instance =
  BillableTimeInSeconds x count x rate / 3600 (managed spot already discounted);
  ``managed_spot_saving`` = 1 - billable / training seconds; ``instance_seconds`` = billable x
  count;
- ``ml_storage`` = count x volume GB x $/GB-month, per second over calendar months (each month
  by its own length, as EBS), TrainingStartTime to TrainingEndTime (or now);
- ``warm_pool`` = retained billable seconds x count x rate / 3600.

Reservations (``reservation_cost``), over the instance spans the ledger saw in the reservation:
- Capacity Block: the upfront fee spread evenly over its reserved instance-seconds; an instance
  costs fee x its seconds / (count x block seconds) (no 60-second minimum), plus any hourly OS
  fee; unused reserved instance-seconds (count x elapsed block seconds - used), accrued to now,
  are ``wasted_reserved`` at the same share;
- ODCR: instances bill at the on-demand rate as usual (the ledger's rule 1, not here); unused
  reserved instance-seconds are ``wasted_reserved`` at the on-demand rate;
- ``wasted_reserved`` goes to the reservation's job tag, else ``reservation:<id>``.
"""

from __future__ import annotations

import calendar
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict

from shared.managed_models import (
    CapacityReservation,
    ReservationUse,
    TrainingJobDescription,
)

HOUR = Decimal(3600)
DEFAULT_JOB_TAG_KEYS: tuple[str, ...] = ("training-job",)
JobStatus = Literal["running", "stopped", "complete"]
_STATUS: dict[str, JobStatus] = {
    "InProgress": "running",
    "Stopping": "running",
    "Completed": "complete",
    "Failed": "stopped",
    "Stopped": "stopped",
}


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


# -- time ------------------------------------------------------------------------------------


def whole_seconds(start: datetime, end: datetime) -> int:
    """Elapsed seconds, a started second counting whole; 0 if ``end`` is not after ``start``."""
    delta = end - start
    if delta <= timedelta(0):
        return 0
    return delta.days * 86400 + delta.seconds + (1 if delta.microseconds else 0)


def _month_start(at: datetime) -> datetime:
    return datetime(at.year, at.month, 1, tzinfo=UTC)


def _next_month_start(at: datetime) -> datetime:
    return _month_start(at) + timedelta(days=calendar.monthrange(at.year, at.month)[1])


def prorate_monthly(usd_per_month: Decimal, start: datetime, end: datetime) -> Decimal:
    """A monthly price accrued per second, each calendar month by its own length (as EBS)."""
    total = Decimal(0)
    cursor, end = start.astimezone(UTC), end.astimezone(UTC)
    while cursor < end:
        boundary = _next_month_start(cursor)
        piece_end = min(end, boundary)
        month_seconds = Decimal((boundary - _month_start(cursor)).days * 86400)
        total += usd_per_month * Decimal(whole_seconds(cursor, piece_end)) / month_seconds
        cursor = piece_end
    return total


def first_job_tag(tags: Mapping[str, str], job_tag_keys: Sequence[str]) -> str | None:
    for key in job_tag_keys:
        value = tags.get(key)
        if value:
            return value
    return None


# -- SageMaker training jobs -----------------------------------------------------------------


def sagemaker_job_id(
    name: str, tags: Mapping[str, str], job_tag_keys: Sequence[str] = DEFAULT_JOB_TAG_KEYS
) -> str:
    """The first configured job tag in the event's ``Tags``, else ``sagemaker:<name>``."""
    return first_job_tag(tags, job_tag_keys) or f"sagemaker:{name}"


def sagemaker_job_status(training_job_status: str) -> JobStatus:
    """Completed -> complete; Failed, Stopped -> stopped; InProgress, Stopping -> running."""
    try:
        return _STATUS[training_job_status]
    except KeyError:
        raise ValueError(f"unknown TrainingJobStatus {training_job_status!r}") from None


class TrainingJobCost(_Frozen):
    """One training job's figures. Parts are None when their price is unknown."""

    job_id: str
    training_job_name: str
    status: JobStatus
    instance_type: str
    instance_count: int
    instance_usd: Decimal | None
    ml_storage_usd: Decimal | None
    warm_pool_usd: Decimal | None
    instance_seconds: int
    warm_pool_instance_seconds: int
    managed_spot_saving: Decimal | None
    # True: from DescribeTrainingJob's billable seconds; False: accrued to now (an estimate).
    billed: bool
    unpriced: tuple[str, ...] = ()

    @property
    def total_usd(self) -> Decimal:
        """instance + ml_storage + warm_pool, of the parts that are priced ("at least")."""
        parts = (self.instance_usd, self.ml_storage_usd, self.warm_pool_usd)
        return sum((p for p in parts if p is not None), Decimal(0))

    @property
    def complete(self) -> bool:
        return not self.unpriced

    def cost_usd(self) -> dict[str, Decimal | None]:
        """The SPEC's ``cost_usd`` keys this job has (``total`` per the SPEC's rule)."""
        return {
            "total": self.total_usd,
            "instance": self.instance_usd,
            "ml_storage": self.ml_storage_usd,
            "warm_pool": self.warm_pool_usd,
        }


def _storage_window(job: TrainingJobDescription, now: datetime) -> tuple[datetime, datetime] | None:
    start = job.training_start
    if start is None and job.training_end is not None and job.training_seconds is not None:
        start = job.training_end - timedelta(seconds=job.training_seconds)
    if start is None:
        return None
    end = job.training_end if job.training_end is not None else now
    return (start, min(end, now)) if end > start else None


def training_job_cost(
    job: TrainingJobDescription,
    *,
    now: datetime,
    hourly_usd: Decimal | None,
    storage_gb_month_usd: Decimal | None,
    job_tag_keys: Sequence[str] = DEFAULT_JOB_TAG_KEYS,
) -> TrainingJobCost:
    """A SageMaker training job's cost at ``now`` (rules in the module docstring).

    ``hourly_usd`` is SageMaker's own rate for ``job.instance_type`` (an ``ml.*`` rate);
    ``storage_gb_month_usd`` its ML storage rate. A terminal job whose billable seconds are
    not known yet is accrued to its TrainingEndTime and stays ``billed`` False.
    """
    count = job.instance_count
    unpriced: list[str] = []
    billed = job.terminal and job.billable_seconds is not None
    if billed:
        assert job.billable_seconds is not None
        seconds = job.billable_seconds
    elif job.training_start is None:
        seconds = 0  # still starting: SageMaker bills from TrainingStartTime
    else:
        until = min(job.training_end, now) if job.training_end is not None else now
        seconds = whole_seconds(job.training_start, until)
    instance_seconds = seconds * count
    warm_seconds = (job.warm_pool_retained_billable_seconds or 0) * count

    instance_usd: Decimal | None = None
    warm_pool_usd: Decimal | None = Decimal(0) if warm_seconds == 0 else None
    if hourly_usd is not None:
        instance_usd = Decimal(instance_seconds) * hourly_usd / HOUR
        warm_pool_usd = Decimal(warm_seconds) * hourly_usd / HOUR
    else:
        unpriced.append(f"sagemaker {job.instance_type} ({job.region or 'region unknown'})")

    window = _storage_window(job, now)
    ml_storage_usd: Decimal | None = Decimal(0)
    if window is not None and job.volume_size_gb > 0:
        if storage_gb_month_usd is None:
            ml_storage_usd = None
            unpriced.append(f"sagemaker ml storage GB-month ({job.region or 'region unknown'})")
        else:
            monthly = storage_gb_month_usd * job.volume_size_gb * count
            ml_storage_usd = prorate_monthly(monthly, *window)

    saving: Decimal | None = None
    if job.managed_spot and billed and job.training_seconds:
        assert job.billable_seconds is not None
        saving = 1 - Decimal(job.billable_seconds) / Decimal(job.training_seconds)

    return TrainingJobCost(
        job_id=sagemaker_job_id(job.name, job.tags, job_tag_keys),
        training_job_name=job.name,
        status=sagemaker_job_status(job.status),
        instance_type=job.instance_type,
        instance_count=count,
        instance_usd=instance_usd,
        ml_storage_usd=ml_storage_usd,
        warm_pool_usd=warm_pool_usd,
        instance_seconds=instance_seconds,
        warm_pool_instance_seconds=warm_seconds,
        managed_spot_saving=saving,
        billed=billed,
        unpriced=tuple(unpriced),
    )


# -- reservations ----------------------------------------------------------------------------


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


class ReservationUsage(_Frozen):
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


class JobReservationCharge(_Frozen):
    """What one job's instances used of a reservation. ``instance_usd`` is the Capacity Block
    share (+ OS fee) that replaces the on-demand rate; None for an ODCR (its instances bill at
    the on-demand rate by the usual rule) or when the fee is unknown."""

    job_id: str
    instance_seconds: int
    instance_usd: Decimal | None


class ReservationCost(_Frozen):
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


class BlockForecast(_Frozen):
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
