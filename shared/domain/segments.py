"""Pricing a billed span (cost rules 1, 2 and 9): per second with a 60 s minimum
(hourly platforms: whole hours), at a constant rate or along a spot series.

Closed spans become fixed amounts; an open span is linear in its clock, so it
accrues to any "now" without being rewritten.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Protocol

from shared.domain import accrual as acc
from shared.domain.accrual import Accrual
from shared.domain.base import Frozen
from shared.domain.clock import SECONDS_PER_HOUR, seconds_clock, whole_seconds
from shared.domain.lifecycle import Span
from shared.domain.rates import RatePin

MINIMUM_BILLED_SECONDS = 60


class SeriesReader(Protocol):
    def integral(self, series_id: str, at: datetime) -> Decimal: ...

    def rate_at(self, series_id: str, at: datetime) -> Decimal: ...


def billed_seconds(start: datetime, end: datetime, *, hourly: bool = False) -> int:
    elapsed = whole_seconds(start, end)
    if hourly:
        return max(1, -(-elapsed // 3600)) * 3600
    return max(MINIMUM_BILLED_SECONDS, elapsed)


class SegmentCost(Frozen):
    """A span with its price: numerators in USD-seconds per hour (divide by 3600)."""

    instance_id: str
    span: Span
    pin: RatePin | None  # None: no price known yet (unpriced, never 0)
    hourly: bool = False
    billed_seconds: int = 0  # closed spans: after the minimum; open: 0 (see accrued_to)
    list_num: Decimal | None = None
    eff_num: Decimal | None = None
    unpriced_key: str = ""  # e.g. "ec2:trn2.48xlarge:us-east-1" when pin is None
    # The end its sealed record is keyed by, when a late event moved the end earlier: the
    # record is then rewritten in place (one item, not a void and a new one), so a
    # record's key end is an upper bound of its end (readers clip by the span).
    key_end: datetime | None = None

    @property
    def closed(self) -> bool:
        return self.span.end is not None

    @property
    def record_end(self) -> datetime | None:
        """The end in its sealed record's key."""
        return self.key_end or self.span.end

    @property
    def priced(self) -> bool:
        return self.pin is not None


def price_span(
    instance_id: str,
    span: Span,
    pin: RatePin | None,
    series: SeriesReader | None,
    *,
    hourly: bool = False,
    unpriced_key: str = "",
) -> SegmentCost:
    if span.end is None:
        return SegmentCost(
            instance_id=instance_id, span=span, pin=pin, hourly=hourly, unpriced_key=unpriced_key
        )
    billed = billed_seconds(span.start, span.end, hourly=hourly)
    if pin is not None and pin.per_second:
        billed = whole_seconds(span.start, span.end)
    list_num = eff_num = None
    if pin is not None:
        extra = billed - whole_seconds(span.start, span.end)
        if pin.rate is not None:
            list_num = pin.rate.list_usd * billed
            eff_num = pin.rate.effective_usd * billed
        else:
            assert pin.series is not None and pin.series_start is not None and series is not None
            closing_rate = series.rate_at(pin.series, span.end)
            eff_num = series.integral(pin.series, span.end) - pin.series_start
            eff_num += closing_rate * extra
            list_num = eff_num
    return SegmentCost(
        instance_id=instance_id,
        span=span,
        pin=pin,
        hourly=hourly,
        billed_seconds=billed,
        list_num=list_num,
        eff_num=eff_num,
        unpriced_key=unpriced_key if pin is None else "",
    )


def accrued_to(cost: SegmentCost, now: datetime, series: SeriesReader | None) -> SegmentCost:
    """An open segment as it stands at ``now`` (rule 9), for showing: its running seconds
    and its cost so far (no minimum yet: it applies when it closes). Closed segments, and
    a spot segment without its series, are returned as they are; unpriced stays unpriced."""
    if cost.closed:
        return cost
    seconds = whole_seconds(cost.span.start, max(now, cost.span.start))
    if cost.pin is None or (cost.pin.rate is None and series is None):
        return cost.model_copy(update={"billed_seconds": seconds})
    eff = cost_inside(cost, cost.span.start, now, series, list_price=False)
    lst = cost_inside(cost, cost.span.start, now, series, list_price=True)
    return cost.model_copy(
        update={
            "billed_seconds": seconds,
            "eff_num": eff * SECONDS_PER_HOUR,
            "list_num": lst * SECONDS_PER_HOUR,
        }
    )


def segment_accrual(cost: SegmentCost) -> Accrual:
    """What a segment contributes: fixed once closed, linear while open."""
    out = Accrual()
    span = cost.span
    if span.end is not None:
        out.fixed(acc.SECONDS, acc.SECONDS_CLOCK, 1, cost.billed_seconds)
        if cost.eff_num is not None and cost.list_num is not None:
            out.fixed(acc.INSTANCE, acc.SECONDS_CLOCK, SECONDS_PER_HOUR, cost.eff_num)
            out.fixed(acc.INSTANCE_LIST, acc.SECONDS_CLOCK, SECONDS_PER_HOUR, cost.list_num)
        else:
            out.fixed(unpriced_component(cost.unpriced_key), acc.SECONDS_CLOCK, 1, 1)
        return out
    start = seconds_clock(span.start)
    out.linear(acc.SECONDS, acc.SECONDS_CLOCK, 1, 1, start)
    pin = cost.pin
    if pin is None:
        out.fixed(unpriced_component(cost.unpriced_key), acc.SECONDS_CLOCK, 1, 1)
    elif pin.rate is not None:
        out.linear(acc.INSTANCE, acc.SECONDS_CLOCK, SECONDS_PER_HOUR, pin.rate.effective_usd, start)
        out.linear(acc.INSTANCE_LIST, acc.SECONDS_CLOCK, SECONDS_PER_HOUR, pin.rate.list_usd, start)
    else:
        assert pin.series is not None and pin.series_start is not None
        clock = acc.spot_clock(pin.series)
        out.linear(acc.INSTANCE, clock, SECONDS_PER_HOUR, 1, pin.series_start)
        out.linear(acc.INSTANCE_LIST, clock, SECONDS_PER_HOUR, 1, pin.series_start)
    return out


UNPRICED_PREFIX = "unpriced:"


def unpriced_component(key: str) -> str:
    return f"{UNPRICED_PREFIX}{key}"


def cost_inside(
    cost: SegmentCost, lo: datetime, hi: datetime, series: SeriesReader | None, *, list_price: bool
) -> Decimal:
    """Running cost of the segment inside [lo, hi], without its billing minimum
    (a portion of its cost: rerun and idle windows, day splits). 0 when unpriced."""
    pin = cost.pin
    span = cost.span
    if pin is None:
        return Decimal(0)
    end = span.end if span.end is not None else hi
    a, b = max(lo, span.start), min(hi, end)
    if b <= a:
        return Decimal(0)
    if pin.rate is not None:
        rate = pin.rate.list_usd if list_price else pin.rate.effective_usd
        return rate * whole_seconds(a, b) / SECONDS_PER_HOUR
    assert pin.series is not None and series is not None
    return (series.integral(pin.series, b) - series.integral(pin.series, a)) / SECONDS_PER_HOUR


def minimum_extra(cost: SegmentCost, series: SeriesReader | None, *, list_price: bool) -> Decimal:
    """The part of a closed segment's cost billed beyond its running time (the 60 s
    minimum or the started hour); it belongs to the moment the segment closed."""
    if cost.span.end is None or cost.pin is None:
        return Decimal(0)
    num = cost.list_num if list_price else cost.eff_num
    assert num is not None
    running = cost_inside(cost, cost.span.start, cost.span.end, series, list_price=list_price)
    return num / SECONDS_PER_HOUR - running
