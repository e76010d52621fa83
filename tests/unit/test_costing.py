"""Cost rules (SPEC rules 1, 3, 8) as pure functions: boundaries worked by hand."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from shared.costing import (
    billed_seconds,
    days_spanned,
    ebs_window,
    fold_segments,
    price_segment,
    prorate_monthly,
)
from shared.models import Rate, RateSource, RateStep, Segment, SpotNotice, Transition

T0 = datetime(2026, 11, 1, 10, 0, tzinfo=UTC)


def at(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


def rate(usd: str, effective: str | None = None) -> Rate:
    return Rate(
        list_usd=Decimal(usd),
        effective_usd=Decimal(effective or usd),
        source=RateSource.OVERRIDE,
        checked_on=T0.date(),
        region="us-east-1",
    )


def t(eid: str, seconds: int, state: str) -> Transition:
    return Transition(event_id=eid, at=at(seconds), state=state)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("elapsed", "billed"), [(0, 60), (59, 60), (60, 60), (61, 61), (3600, 3600)]
)
def test_per_second_billing_has_a_60_second_minimum(elapsed: int, billed: int) -> None:
    assert billed_seconds(at(0), at(elapsed)) == billed


@pytest.mark.parametrize(
    ("elapsed", "billed"), [(1, 3600), (3599, 3600), (3600, 3600), (3601, 7200)]
)
def test_hourly_platforms_round_each_segment_up_to_whole_hours(elapsed: int, billed: int) -> None:
    assert billed_seconds(at(0), at(elapsed), hourly=True) == billed


def test_sub_second_remainder_counts_as_a_started_second() -> None:
    assert billed_seconds(at(0), at(61) + timedelta(milliseconds=1)) == 62


def test_closed_segment_cost_is_billed_seconds_times_hourly_rate() -> None:
    seg = Segment(instance_id="i-1", start=at(0), end=at(59), start_event_id="a")
    priced = price_segment(seg, (RateStep(since=at(0), rate=rate("21.50")),), now=at(10_000))
    # 59 s bills the 60 s minimum: 60 / 3600 * 21.50 = 0.358333...
    assert priced.billed_seconds == 60
    assert priced.list_usd == Decimal(60) * Decimal("21.50") / Decimal(3600)


def test_open_segment_accrues_to_now_without_the_minimum() -> None:
    seg = Segment(instance_id="i-1", start=at(0), end=None, start_event_id="a")
    priced = price_segment(seg, (RateStep(since=at(0), rate=rate("36")),), now=at(30))
    assert priced.billed_seconds == 30
    assert priced.effective_usd == Decimal("0.3")  # 30 s at $36/h


def test_piecewise_spot_rates_and_minimum_at_the_closing_rate() -> None:
    seg = Segment(instance_id="i-1", start=at(0), end=at(1800), start_event_id="a")
    steps = (RateStep(since=at(-50), rate=rate("10")), RateStep(since=at(900), rate=rate("20")))
    priced = price_segment(seg, steps, now=at(1800))
    # 900 s at $10/h + 900 s at $20/h = 2.5 + 5.0
    assert priced.list_usd == Decimal("7.5")


def test_effective_rate_is_kept_beside_the_list_rate() -> None:
    seg = Segment(instance_id="i-1", start=at(0), end=at(3600), start_event_id="a")
    priced = price_segment(seg, (RateStep(since=at(0), rate=rate("10", "7")),), now=at(3600))
    assert (priced.list_usd, priced.effective_usd) == (Decimal(10), Decimal(7))


def test_unpriced_segment_keeps_its_seconds_and_has_no_cost() -> None:
    seg = Segment(instance_id="i-1", start=at(0), end=at(120), start_event_id="a")
    priced = price_segment(seg, (), now=at(120))
    assert priced.billed_seconds == 120
    assert priced.list_usd is None and not priced.priced


def test_fold_orders_by_event_time_not_arrival() -> None:
    arrived = [t("stop", 3600, "stopped"), t("run", 0, "running")]
    (segment,) = fold_segments("i-1", arrived)
    assert (segment.start, segment.end, segment.end_state) == (at(0), at(3600), "stopped")


def test_fold_ignores_duplicates_and_closes_at_the_first_closing_state() -> None:
    events = [
        t("r1", 0, "running"),
        t("r1", 0, "running"),
        t("r2", 10, "running"),  # a second running while open adds nothing
        t("s1", 100, "stopping"),
        t("s2", 160, "stopped"),
        t("s3", 170, "terminated"),
    ]
    (segment,) = fold_segments("i-1", events)
    assert (segment.start, segment.end) == (at(0), at(100))


def test_hibernating_spot_stop_bills_through_stopping_until_stopped() -> None:
    events = [t("r", 0, "running"), t("s1", 100, "stopping"), t("s2", 400, "stopped")]
    notice = SpotNotice(event_id="n", at=at(0) + timedelta(seconds=98), action="hibernate")
    (segment,) = fold_segments("i-1", events, [notice])
    assert segment.end == at(400)
    (plain,) = fold_segments("i-1", events)
    assert plain.end == at(100)


def test_late_running_after_stopped_does_not_leave_the_instance_running() -> None:
    events = [
        t("s", 500, "stopped"),
        t("r2", 1000, "running"),
        t("s2", 1100, "stopped"),
        t("r", 0, "running"),
    ]
    segments = fold_segments("i-1", events)
    assert [(s.start, s.end) for s in segments] == [(at(0), at(500)), (at(1000), at(1100))]


def test_ebs_accrues_from_first_running_to_terminated_including_stopped_time() -> None:
    events = [t("r", 0, "running"), t("s", 100, "stopped"), t("x", 1000, "terminated")]
    assert ebs_window(events, now=at(5000)) == (at(0), at(1000))
    assert ebs_window(events[:2], now=at(5000)) == (at(0), at(5000))
    assert ebs_window([t("p", 0, "pending")], now=at(10)) is None


def test_monthly_proration_splits_at_month_ends_by_each_months_length() -> None:
    start = datetime(2026, 10, 31, 12, tzinfo=UTC)
    end = datetime(2026, 11, 1, 12, tzinfo=UTC)
    # 12 h of October (31 days) + 12 h of November (30 days), $31/month
    expected = Decimal(31) * 43200 / (31 * 86400) + Decimal(31) * 43200 / (30 * 86400)
    assert prorate_monthly(Decimal(31), start, end) == expected


def test_days_spanned_includes_both_ends_across_midnight() -> None:
    start = datetime(2026, 11, 1, 23, 59, tzinfo=UTC)
    end = datetime(2026, 11, 3, 0, 0, 1, tzinfo=UTC)
    assert [d.day for d in days_spanned(start, end)] == [1, 2, 3]


def test_windowed_cost_splits_at_midnight_and_adds_up_to_the_lifetime_total() -> None:
    from shared.costing import instance_cost, instance_cost_between
    from shared.models import InstanceProfile, InstanceRecord, Volume

    start = datetime(2026, 11, 1, 23, 0, tzinfo=UTC)
    transitions = (
        Transition(event_id="r", at=start, state="running"),
        Transition(event_id="s", at=start + timedelta(hours=2), state="stopped"),
        Transition(event_id="r2", at=start + timedelta(hours=3), state="running"),
        Transition(event_id="s2", at=start + timedelta(hours=3, seconds=10), state="stopped"),
    )
    record = InstanceRecord(
        profile=InstanceProfile(
            instance_id="i-1",
            instance_type="trn1.32xlarge",
            region="us-east-1",
            volumes=(Volume(volume_id="v", size_gib=100),),
        ),
        job_id="j",
        transitions=transitions,
        segment_rates={
            "r": (RateStep(since=start, rate=rate("36")),),
            "r2": (RateStep(since=start, rate=rate("36")),),
        },
        volume_rates={"gp3": rate("0.08")},
    )
    now = start + timedelta(hours=5)
    midnight = datetime(2026, 11, 2, tzinfo=UTC)
    day1 = instance_cost_between(record, midnight - timedelta(days=1), midnight, now)
    day2 = instance_cost_between(record, midnight, midnight + timedelta(days=1), now)
    # day 1: 3,600 s at $36/h; day 2: 3,600 s + the 10 s segment billed as 60 s
    ebs1 = prorate_monthly(Decimal(8), start, midnight)
    assert day1 == Decimal(36) + ebs1
    assert day2 == Decimal(36) + Decimal("0.6") + prorate_monthly(Decimal(8), midnight, now)
    whole = instance_cost(record, now)
    assert abs(day1 + day2 - (whole.instance_usd + whole.ebs_usd)) < Decimal("1e-20")
