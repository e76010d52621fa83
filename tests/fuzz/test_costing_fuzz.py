"""Fuzz the pure cost core (shared.costing) with random aware datetimes and transitions."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from shared.costing import (
    MINIMUM_BILLED_SECONDS,
    billed_seconds,
    fold_segments,
    price_segment,
    prorate_monthly,
    whole_seconds,
)
from shared.models import (
    CLOSING_STATES,
    Rate,
    RateSource,
    RateStep,
    Segment,
    SpotNotice,
    Transition,
)

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
STATES = ["pending", "running", "stopping", "stopped", "shutting-down", "terminated"]
# Decimal's 28 significant digits: sums of quotients may differ in the last places.
EPSILON = Decimal("1e-15")

OFFSETS = [
    UTC,
    timezone(timedelta(hours=-5)),
    timezone(timedelta(hours=5, minutes=30)),
    timezone(timedelta(hours=14)),
    timezone(timedelta(hours=-12)),
]
aware = st.datetimes(
    min_value=datetime(2000, 1, 1),  # noqa: DTZ001 - hypothesis bounds are naive by contract
    max_value=datetime(2100, 1, 1),  # noqa: DTZ001
    timezones=st.sampled_from(OFFSETS),
)
aware_utc = st.datetimes(
    min_value=datetime(2000, 1, 1),  # noqa: DTZ001
    max_value=datetime(2100, 1, 1),  # noqa: DTZ001
    timezones=st.just(UTC),
)
spans = st.one_of(
    st.timedeltas(min_value=timedelta(0), max_value=timedelta(seconds=120)),
    st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=100)),
    st.integers(0, 10**7).map(lambda s: timedelta(seconds=s)),
)
usd = st.decimals(min_value=0, max_value=200, places=6, allow_nan=False, allow_infinity=False)


def rate(list_usd: Decimal, effective_usd: Decimal) -> Rate:
    return Rate(
        list_usd=list_usd,
        effective_usd=effective_usd,
        source=RateSource.SPOT_HISTORY,
        checked_on=date(2026, 11, 1),
        region="us-east-1",
    )


rates = st.builds(rate, usd, usd)


@st.composite
def segments_and_steps(draw: st.DrawFn) -> tuple[Segment, tuple[RateStep, ...], datetime]:
    """A segment, its rate steps and ``now``. Starts and rate changes fall on whole seconds,
    as AWS stamps them (EventBridge ``time``, spot price history); ends and ``now`` need not
    (see the xfail test on sub-second rate changes below)."""
    start = draw(aware).replace(microsecond=0)
    closed = draw(st.booleans())
    end = start + draw(spans) if closed else None
    now = start + draw(spans) - draw(st.sampled_from([timedelta(0), timedelta(hours=1)]))
    around = st.integers(-2 * 86400, 5 * 86400).map(lambda s: start + timedelta(seconds=s))
    steps = draw(st.lists(st.builds(lambda s, r: RateStep(since=s, rate=r), around, rates),
                          max_size=4))  # fmt: skip
    segment = Segment(instance_id="i-0", start=start, end=end, start_event_id="e0")
    return segment, tuple(steps), now


# --- billed_seconds ---------------------------------------------------------------------


@FUZZ
@given(start=aware, span=spans, early=st.booleans())
def test_closed_per_second_segments_bill_at_least_the_minimum(
    start: datetime, span: timedelta, early: bool
) -> None:
    end = start - span if early else start + span  # a stop stamped before its start, too
    seconds = billed_seconds(start, end)
    assert seconds >= MINIMUM_BILLED_SECONDS
    assert seconds >= whole_seconds(end - start)
    assert seconds == max(MINIMUM_BILLED_SECONDS, whole_seconds(end - start))


@FUZZ
@given(start=aware, span=spans)
def test_hourly_segments_bill_whole_started_hours(start: datetime, span: timedelta) -> None:
    seconds = billed_seconds(start, start + span, hourly=True)
    assert seconds % 3600 == 0 and seconds >= 3600
    assert seconds == max(3600, -(-whole_seconds(span) // 3600) * 3600)


@FUZZ
@given(start=aware, span=spans, offset=st.sampled_from(OFFSETS))
def test_billing_does_not_depend_on_the_zone_an_event_was_written_in(
    start: datetime, span: timedelta, offset: timezone
) -> None:
    end = start + span
    assert billed_seconds(start, end) == billed_seconds(
        start.astimezone(offset), end.astimezone(UTC)
    )


# --- price_segment ----------------------------------------------------------------------


@FUZZ
@given(case=segments_and_steps())
def test_priced_segments_cost_nothing_negative(
    case: tuple[Segment, tuple[RateStep, ...], datetime],
) -> None:
    segment, steps, now = case
    for hourly in (False, True):
        priced = price_segment(segment, steps, now, hourly=hourly)
        if segment.end is not None:
            assert priced.billed_seconds >= (3600 if hourly else MINIMUM_BILLED_SECONDS)
            assert priced.billed_seconds == billed_seconds(segment.start, segment.end,
                                                           hourly=hourly)  # fmt: skip
        else:
            assert priced.billed_seconds == whole_seconds(max(now, segment.start) - segment.start)
        if not steps:
            assert priced.list_usd is None and priced.effective_usd is None
            continue
        assert priced.list_usd is not None and priced.effective_usd is not None
        assert priced.list_usd >= 0 and priced.effective_usd >= 0
        # Between the cheapest and the dearest rate over the billed seconds.
        hours = Decimal(priced.billed_seconds) / Decimal(3600)
        for attr in ("list_usd", "effective_usd"):
            lo = min(getattr(s.rate, attr) for s in steps) * hours
            hi = max(getattr(s.rate, attr) for s in steps) * hours
            got = getattr(priced, attr)
            assert lo - EPSILON <= got <= hi + EPSILON


@FUZZ
@given(case=segments_and_steps(), single=rates)
def test_a_single_rate_costs_billed_seconds_times_the_hourly_rate(
    case: tuple[Segment, tuple[RateStep, ...], datetime], single: Rate
) -> None:
    segment, _, now = case
    step = RateStep(since=segment.start + timedelta(minutes=7), rate=single)
    priced = price_segment(segment, (step,), now)
    expected = Decimal(priced.billed_seconds) * single.list_usd / Decimal(3600)
    assert priced.list_usd is not None
    assert abs(priced.list_usd - expected) <= EPSILON


def test_sub_second_rate_changes_do_not_add_a_second() -> None:
    start = datetime(2026, 11, 1, 10, 0, 0, 500_000, tzinfo=UTC)  # 10:00:00.5
    segment = Segment(
        instance_id="i-0", start=start, end=start + timedelta(seconds=99.8), start_event_id="e0"
    )
    steps = (
        RateStep(since=start - timedelta(hours=1), rate=rate(Decimal(36), Decimal(36))),
        RateStep(since=start + timedelta(seconds=29.5), rate=rate(Decimal(36), Decimal(36))),
    )
    priced = price_segment(segment, steps, start + timedelta(hours=1))
    assert priced.billed_seconds == 100  # 99.8 s, the started second counting whole
    assert priced.list_usd == Decimal("1.00")  # 100 s at $36/h; it is $1.01 (101 s)


# --- prorate_monthly --------------------------------------------------------------------


@FUZZ
@given(price=usd, start=aware_utc, span=spans, cut=st.floats(0, 1))
def test_monthly_proration_is_non_negative_bounded_and_additive(
    price: Decimal, start: datetime, span: timedelta, cut: float
) -> None:
    start = start.replace(microsecond=0)
    end = start + timedelta(seconds=whole_seconds(span))
    total = prorate_monthly(price, start, end)
    assert total >= 0
    # a month is at least 28 days long: no span costs more than its 28-day months
    assert total <= price * Decimal(whole_seconds(end - start)) / Decimal(28 * 86400) + EPSILON
    middle = start + timedelta(seconds=int(whole_seconds(end - start) * cut))
    parts = prorate_monthly(price, start, middle) + prorate_monthly(price, middle, end)
    assert abs(total - parts) <= EPSILON
    assert prorate_monthly(price, end, start) == 0


@FUZZ
@given(price=usd, year=st.integers(2000, 2099), month=st.integers(1, 12))
def test_a_whole_calendar_month_costs_the_monthly_price(
    price: Decimal, year: int, month: int
) -> None:
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
    assert abs(prorate_monthly(price, start, end) - price) <= EPSILON


@FUZZ
@given(price=usd, start=aware, span=spans, offset=st.sampled_from(OFFSETS))
@example(
    price=Decimal(720),
    start=datetime(2026, 11, 30, 23, tzinfo=timezone(timedelta(hours=-5))),
    span=timedelta(hours=2),
    offset=UTC,
)
def test_monthly_proration_does_not_depend_on_the_zone(
    price: Decimal, start: datetime, span: timedelta, offset: timezone
) -> None:
    assume(price > 0)
    end = start + span
    expected = prorate_monthly(price, start.astimezone(UTC), end.astimezone(UTC))
    assert abs(prorate_monthly(price, start, end.astimezone(offset)) - expected) <= EPSILON


# --- fold_segments ----------------------------------------------------------------------

T0 = datetime(2026, 11, 1, 10, tzinfo=UTC)


@st.composite
def histories(draw: st.DrawFn) -> tuple[list[Transition], list[SpotNotice]]:
    """Up to 14 state changes within a few hours (same-second ties included), unique ids."""
    offsets = st.one_of(
        st.integers(0, 4 * 3600).map(lambda s: timedelta(seconds=s)),
        st.integers(0, 600).map(lambda s: timedelta(seconds=s // 60 * 60)),  # collisions
        st.timedeltas(timedelta(0), timedelta(hours=4)),  # sub-second
    )
    transitions = []
    for n in range(draw(st.integers(0, 14))):
        at = (T0 + draw(offsets)).astimezone(draw(st.sampled_from(OFFSETS)))
        state = draw(st.sampled_from(STATES))
        transitions.append(Transition(event_id=f"e{n:02d}", at=at, state=state))  # type: ignore[arg-type]
    notices = [
        SpotNotice(
            event_id=f"n{n}",
            at=T0 + draw(offsets),
            action=draw(st.sampled_from(["hibernate", "stop", "terminate", "rebalance"])),
        )
        for n in range(draw(st.integers(0, 3)))
    ]
    return transitions, notices


def assert_well_formed(segments: Sequence[Segment], transitions: Sequence[Transition]) -> None:
    by_id = {t.event_id: t for t in transitions}
    for n, segment in enumerate(segments):
        assert by_id[segment.start_event_id].state == "running"
        assert by_id[segment.start_event_id].at == segment.start
        if segment.end is None:
            assert n == len(segments) - 1, "only the last segment may be open"
            assert segment.end_event_id is None
            continue
        assert segment.start <= segment.end
        assert segment.end_event_id is not None
        assert by_id[segment.end_event_id].at == segment.end
        assert segment.end_state in CLOSING_STATES
    for earlier, later in itertools.pairwise(segments):
        assert earlier.end is not None and earlier.end <= later.start, "segments overlap"


@FUZZ
@given(history=histories(), data=st.data())
def test_fold_is_well_formed_and_independent_of_order_and_duplicates(
    history: tuple[list[Transition], list[SpotNotice]], data: st.DataObject
) -> None:
    transitions, notices = history
    segments = fold_segments("i-0", transitions, notices)
    assert_well_formed(segments, transitions)
    duplicated = transitions + data.draw(st.lists(st.sampled_from(transitions), max_size=10)
                                         if transitions else st.just([]))  # fmt: skip
    shuffled = data.draw(st.permutations(duplicated))
    same_instants = [t.model_copy(update={"at": t.at.astimezone(UTC)}) for t in shuffled]
    assert fold_segments("i-0", shuffled, data.draw(st.permutations(notices))) == segments
    assert fold_segments("i-0", same_instants, notices) == segments
    # billing the fold never errs, whatever the history
    for segment in segments:
        if segment.end is not None:
            assert billed_seconds(segment.start, segment.end) >= MINIMUM_BILLED_SECONDS
