"""A capacity reservation's head record (Capacity Block or ODCR) and what its unused reserved
time accrues as ``wasted_reserved`` (docs/cost-rules.md "Managed training and reserved capacity").
Pure.

The head keeps what DescribeCapacityReservations said, the hourly rate of one reserved
instance (a block: fee / (count x block hours); an ODCR: the on-demand rate), whom unused time
is charged to, and the running spans of the instances the ledger saw in it (one per segment,
by the segment's key). Unused time = reserved - used, accruing to now on a clock clamped to
the reservation's window ``w:<start>:<end>`` (seconds), so it stops at the end by itself.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from pydantic import Field

from shared.domain import accrual as acc
from shared.domain.accrual import Accrual
from shared.domain.base import Frozen, Rate
from shared.domain.clock import SECONDS_PER_HOUR, seconds_clock, whole_seconds
from shared.domain.managed.models import CapacityReservation, ReservationUse
from shared.domain.segments import unpriced_component

N_RESERVATIONS = "n_reservations"
MAX_NOTES = 8


def window_clock(reservation: CapacityReservation) -> str:
    """The seconds clock clamped to the reservation's window (open end: no upper bound)."""
    end = "" if reservation.end is None else str(seconds_clock(reservation.end))
    return f"w:{seconds_clock(reservation.start)}:{end}"


class UseSpan(Frozen):
    """One running segment of an instance in the reservation (``end`` None: running)."""

    key: str
    instance_id: str
    job_id: str
    start: datetime
    end: datetime | None = None


class ReservationHead(Frozen):
    reservation: CapacityReservation
    job_id: str  # who unused time is charged to
    region: str = ""
    rate: Rate | None = None  # per reserved instance-hour; None: unpriced
    fee_usd: Decimal | None = None
    spans: tuple[UseSpan, ...] = ()
    notes: tuple[str, ...] = ()
    # Past its end, with its figures fixed (the daily refresh closes it): nothing accrues.
    closed: bool = False
    version: int = 0

    @property
    def reservation_id(self) -> str:
        return self.reservation.reservation_id

    @property
    def account(self) -> str:
        return self.reservation.account

    def unpriced_key(self) -> str:
        r = self.reservation
        what = "capacity_block_fee" if r.kind == "capacity-block" else "ec2"
        return f"{what}:{r.instance_type}:{self.region or 'region unknown'}:{r.reservation_id}"

    def uses(self) -> list[ReservationUse]:
        return [
            ReservationUse(instance_id=s.instance_id, job_id=s.job_id, start=s.start, end=s.end)
            for s in self.spans
        ]

    def with_spans(
        self,
        instance_id: str,
        job_id: str,
        spans: list[tuple[str, datetime, datetime | None]],
        void: set[str],
    ) -> ReservationHead:
        """The head with one instance's segments upserted by key and voided ones removed."""
        kept = {s.key: s for s in self.spans if s.key not in void}
        for key, start, end in spans:
            kept[key] = UseSpan(
                key=key, instance_id=instance_id, job_id=job_id, start=start, end=end
            )
        ordered = tuple(sorted(kept.values(), key=lambda s: (s.start, s.instance_id, s.key)))
        return self.model_copy(update={"spans": ordered})

    def noted(self, note: str) -> ReservationHead:
        if note in self.notes:
            return self
        return self.model_copy(update={"notes": (*self.notes, note)[-MAX_NOTES:]})


def wasted_accrual(head: ReservationHead) -> Accrual:
    """Reserved instance-time less the used spans (clipped to the window), at the rate."""
    out = Accrual()
    out.fixed(N_RESERVATIONS, acc.SECONDS_CLOCK, 1, 1)
    if head.rate is None:
        out.fixed(unpriced_component(head.unpriced_key()), acc.SECONDS_CLOCK, 1, 1)
        return out
    res = head.reservation
    rate = head.rate.effective_usd
    clock = window_clock(res)
    start = seconds_clock(res.start)
    hour = SECONDS_PER_HOUR
    closed = head.closed and res.end is not None
    if closed:
        assert res.end is not None
        reserved = res.instance_count * whole_seconds(res.start, res.end)
        out.fixed(acc.WASTED_RESERVED, acc.SECONDS_CLOCK, hour, rate * reserved)
    else:
        out.linear(acc.WASTED_RESERVED, clock, hour, rate * res.instance_count, start)
    for span in head.spans:
        a = max(span.start, res.start)
        end = span.end if span.end is not None or not closed else res.end
        if end is not None:
            b = end if res.end is None else min(end, res.end)
            out.fixed(acc.WASTED_RESERVED, acc.SECONDS_CLOCK, hour, -rate * whole_seconds(a, b))
        elif res.end is None or a < res.end:
            out.linear(acc.WASTED_RESERVED, clock, hour, -rate, seconds_clock(a))
    return out


def wasted_between(head: ReservationHead, lo: datetime, hi: datetime) -> Decimal:
    """Unused reserved time inside (lo, hi] at the rate (0 when unpriced: it is named)."""
    from shared.domain.managed.reservation_cost import reservation_usage

    if head.rate is None or hi <= lo:
        return Decimal(0)
    usage = reservation_usage(head.reservation, head.uses(), hi, since=lo)
    return head.rate.effective_usd * usage.unused_instance_seconds / SECONDS_PER_HOUR


def reserved_until(head: ReservationHead) -> str:
    end = head.reservation.end
    return "9999-12-31T00:00:00+00:00" if end is None else end.isoformat()


class ReservationView(Frozen):
    """What the job view shows of a reservation charged to the job."""

    reservation_id: str
    kind: str
    instance_type: str
    instance_count: int
    reserved_instance_seconds: int
    used_instance_seconds: int
    unused_instance_seconds: int
    utilization: Decimal | None
    usd_per_instance_hour: Decimal | None
    wasted_reserved_usd: Decimal | None
    forecast: str | None = None
    unused_fraction_at_current_pace: Decimal | None = None
    notes: tuple[str, ...] = Field(default_factory=tuple)


def view(head: ReservationHead, now: datetime) -> ReservationView:
    from shared.domain.managed.reservation_cost import block_forecast, reservation_usage

    usage = reservation_usage(head.reservation, head.uses(), now)
    rate = head.rate.effective_usd if head.rate is not None else None
    forecast = block_forecast(head.reservation, head.uses(), now)
    live = forecast is not None and head.reservation.end is not None and now < head.reservation.end
    return ReservationView(
        reservation_id=head.reservation_id,
        kind=head.reservation.kind,
        instance_type=head.reservation.instance_type,
        instance_count=head.reservation.instance_count,
        reserved_instance_seconds=usage.reserved_instance_seconds,
        used_instance_seconds=usage.used_instance_seconds,
        unused_instance_seconds=usage.unused_instance_seconds,
        utilization=usage.utilization,
        usd_per_instance_hour=rate,
        wasted_reserved_usd=None
        if rate is None
        else rate * usage.unused_instance_seconds / SECONDS_PER_HOUR,
        forecast=forecast.message() if forecast is not None and live else None,
        unused_fraction_at_current_pace=forecast.unused_fraction_at_current_pace
        if forecast is not None and live
        else None,
        notes=head.notes,
    )
