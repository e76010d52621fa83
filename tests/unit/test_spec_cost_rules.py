"""Cost rules (cost rules 1, 2, 3, 8, 9) on the domain: boundaries worked by hand.

Clocks, billed seconds, lifecycle folds, priced segments (constant rates and spot
series), EBS with provisioned performance, accruals and their stored form.
"""

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from shared.adapters.pricing import PriceBook
from shared.adapters.pricing_snapshot import bundled_snapshot
from shared.config.ledger import LedgerConfig, PriceOverrides
from shared.domain import accrual as acc
from shared.domain.accrual import Accrual
from shared.domain.base import Rate, RateSource
from shared.domain.clock import (
    MONTH_UNITS,
    ceil_second,
    month_clock,
    seconds_clock,
    whole_seconds,
)
from shared.domain.ebs import (
    Volume,
    VolumeRates,
    ebs_accrual,
    provisioned_iops,
    provisioned_throughput,
)
from shared.domain.instance import InstanceHead, InstanceProfile
from shared.domain.lifecycle import Notice, Span, Transition, fold
from shared.domain.rates import RatePin, SpotSeries
from shared.domain.segments import (
    accrued_to,
    billed_seconds,
    cost_inside,
    minimum_extra,
    price_span,
    segment_accrual,
)
from tests.support import SeriesTable, memory_price_cache

T0 = datetime(2026, 11, 1, 10, 0, tzinfo=UTC)
REGION = "us-east-1"


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def rate(usd: str, effective: str | None = None) -> Rate:
    return Rate(
        list_usd=Decimal(usd),
        effective_usd=Decimal(effective or usd),
        source=RateSource.OVERRIDE,
        checked_on=T0.date(),
        region=REGION,
    )


def pin(usd: str, effective: str | None = None) -> RatePin:
    return RatePin(
        rate=rate(usd, effective),
        source=RateSource.OVERRIDE,
        checked_on=T0.date().isoformat(),
        region=REGION,
    )


def span(start: float, end: float | None) -> Span:
    return Span(start=at(start), end=at(end) if end is not None else None, start_event_id="a")


def t(eid: str, seconds: float, state: str) -> Transition:
    return Transition(event_id=eid, at=at(seconds), state=state)  # type: ignore[arg-type]


# -- clocks and billed seconds (rule 1) ---------------------------------------------------


@pytest.mark.parametrize(
    ("elapsed", "billed"), [(0, 60), (1, 60), (59, 60), (60, 60), (61, 61), (3600, 3600)]
)
def test_per_second_billing_has_a_60_second_minimum(elapsed: int, billed: int) -> None:
    assert billed_seconds(at(0), at(elapsed)) == billed


@pytest.mark.parametrize(
    ("elapsed", "billed"), [(1, 3600), (3599, 3600), (3600, 3600), (3601, 7200)]
)
def test_hourly_platforms_round_each_segment_up_to_whole_hours(elapsed: int, billed: int) -> None:
    assert billed_seconds(at(0), at(elapsed), hourly=True) == billed


def test_suse_is_an_hourly_platform() -> None:
    suse = InstanceProfile(
        instance_id="i-1", instance_type="g5.xlarge", region=REGION, platform="SUSE Linux"
    )
    linux = suse.model_copy(update={"platform": "Linux/UNIX"})
    assert suse.hourly_billing and not linux.hourly_billing


def test_sub_second_remainder_counts_as_a_started_second() -> None:
    assert billed_seconds(at(0), at(61) + timedelta(milliseconds=1)) == 62
    assert ceil_second(at(0.25)) == at(1) and ceil_second(at(1)) == at(1)
    assert seconds_clock(at(0.000001)) == seconds_clock(at(1))
    assert whole_seconds(at(10), at(5)) == 0  # never negative


def test_now_is_rounded_up_to_a_whole_second() -> None:
    open_cost = segment_accrual(price_span("i-1", span(0, None), pin("36"), None))
    # 30 s and a microsecond is 31 started seconds: 31 x $36/h
    assert open_cost.value(acc.INSTANCE, at(30) + timedelta(microseconds=1)) == Decimal("0.31")
    assert open_cost.value(acc.SECONDS, at(30.5)) == 31


def test_month_clock_gives_each_calendar_month_the_same_units() -> None:
    for days in (28, 29, 30, 31):
        assert 377_580 % days == 0
    for year, month in ((2028, 2), (2027, 2), (2026, 11), (2026, 12)):
        start = datetime(year, month, 1, tzinfo=UTC)
        end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
        assert month_clock(end) - month_clock(start) == MONTH_UNITS, (year, month)


def _prorate(usd_month: Decimal, start: datetime, end: datetime) -> Decimal:
    accrual = Accrual().linear(acc.EBS, acc.MONTH_CLOCK, MONTH_UNITS, usd_month, month_clock(start))
    return accrual.value(acc.EBS, end)


def close(a: Decimal, b: Decimal) -> bool:
    return abs(a - b) < Decimal("1e-24")


def test_monthly_proration_splits_at_month_ends_by_each_months_length() -> None:
    start = datetime(2026, 10, 31, 12, tzinfo=UTC)
    end = datetime(2026, 11, 1, 12, tzinfo=UTC)
    # 12 h of October (31 days) + 12 h of November (30 days), $31/month
    expected = Decimal(31) * 43200 / (31 * 86400) + Decimal(31) * 43200 / (30 * 86400)
    assert close(_prorate(Decimal(31), start, end), expected)
    # Across a year end: 12 h of December (31 days) + 12 h of January (31 days) = 1 day
    assert (
        _prorate(
            Decimal(31),
            datetime(2026, 12, 31, 12, tzinfo=UTC),
            datetime(2027, 1, 1, 12, tzinfo=UTC),
        )
        == 1
    )


def test_monthly_proration_knows_leap_februaries() -> None:
    # 2028 is a leap year: 36 h of February (29 days) + 12 h of March (31 days), $29/month
    leap = _prorate(
        Decimal(29), datetime(2028, 2, 28, 12, tzinfo=UTC), datetime(2028, 3, 1, 12, tzinfo=UTC)
    )
    assert close(leap, Decimal("1.5") + Decimal(29) / 62)
    # 2027 is not: 12 h of February (28 days) + 12 h of March, $28/month
    plain = _prorate(
        Decimal(28), datetime(2027, 2, 28, 12, tzinfo=UTC), datetime(2027, 3, 1, 12, tzinfo=UTC)
    )
    assert close(plain, Decimal("0.5") + Decimal(14) / 31)
    # A whole leap February is a whole month
    assert (
        _prorate(Decimal(29), datetime(2028, 2, 1, tzinfo=UTC), datetime(2028, 3, 1, tzinfo=UTC))
        == 29
    )


# -- priced segments (rules 1, 2, 8, 9) ---------------------------------------------------


def test_closed_segment_cost_is_billed_seconds_times_hourly_rate() -> None:
    priced = price_span("i-1", span(0, 59), pin("21.50"), None)
    # 59 s bills the 60 s minimum: 60 / 3600 x 21.50 = 0.358333...
    assert priced.billed_seconds == 60 and priced.closed and priced.priced
    assert priced.list_num == Decimal(60) * Decimal("21.50")
    accrual = segment_accrual(priced)
    expected = Decimal(60) * Decimal("21.50") / Decimal(3600)
    for now in (at(59), at(10_000), at(10**8)):  # a closed segment no longer moves
        assert accrual.value(acc.INSTANCE, now) == expected
        assert accrual.value(acc.SECONDS, now) == 60
    assert not accrual.is_open()


def test_open_segment_accrues_to_any_now_without_the_minimum() -> None:
    accrual = segment_accrual(price_span("i-1", span(0, None), pin("36"), None))
    assert accrual.is_open()
    assert accrual.value(acc.INSTANCE, at(30)) == Decimal("0.3")  # 30 s at $36/h
    assert accrual.value(acc.SECONDS, at(30)) == 30
    assert accrual.value(acc.INSTANCE, at(7200)) == Decimal(72)
    assert accrual.value(acc.INSTANCE, at(86400 * 365)) == Decimal(36 * 24 * 365)
    # It closes with the minimum: the same span closed at 30 s bills 60 s.
    closed = segment_accrual(price_span("i-1", span(0, 30), pin("36"), None))
    assert closed.value(acc.INSTANCE, at(30)) == Decimal("0.6")


def test_an_open_segment_shows_its_seconds_and_cost_accrued_to_now() -> None:
    running = price_span("i-1", span(0, None), pin("36", "30"), None)
    assert running.billed_seconds == 0 and running.eff_num is None  # as stored
    shown = accrued_to(running, at(1800), None)
    assert shown.billed_seconds == 1800 and shown.span.end is None
    assert (shown.eff_num / 3600, shown.list_num / 3600) == (Decimal(15), Decimal(18))
    spot = SeriesTable(series([(-50, "10"), (900, "20")]))
    on_spot = accrued_to(price_span("i-1", span(0, None), spot_pin(spot, 0), spot), at(1800), spot)
    assert on_spot.eff_num == Decimal(27000)  # 900 s at $10/h + 900 s at $20/h
    no_price = price_span("i-1", span(0, None), None, None, unpriced_key="k")
    unpriced = accrued_to(no_price, at(90), None)
    assert unpriced.billed_seconds == 90 and unpriced.eff_num is None  # unpriced, never 0
    closed = price_span("i-1", span(0, 30), pin("36"), None)
    assert accrued_to(closed, at(9999), None) is closed


def test_effective_rate_is_kept_beside_the_list_rate() -> None:
    accrual = segment_accrual(price_span("i-1", span(0, 3600), pin("10", "7"), None))
    assert (accrual.value(acc.INSTANCE_LIST, at(3600)), accrual.value(acc.INSTANCE, at(3600))) == (
        Decimal(10),
        Decimal(7),
    )


def test_unpriced_segment_keeps_its_seconds_and_has_no_cost() -> None:
    priced = price_span("i-1", span(0, 120), None, None, unpriced_key="ec2:trn2.48xlarge:us-east-1")
    assert priced.billed_seconds == 120 and priced.list_num is None and not priced.priced
    accrual = segment_accrual(priced)
    assert accrual.value(acc.SECONDS, at(120)) == 120
    assert accrual.value(acc.INSTANCE, at(120)) == 0
    assert accrual.value("unpriced:ec2:trn2.48xlarge:us-east-1", at(120)) == 1
    # Open and unpriced: its seconds still run.
    running = segment_accrual(price_span("i-1", span(0, None), None, None, unpriced_key="k"))
    assert running.value(acc.SECONDS, at(500)) == 500 and running.value("unpriced:k", at(500)) == 1


def series(points: Sequence[tuple[float, str]], series_id: str = "s") -> SpotSeries:
    return SpotSeries.build(
        series_id,
        [(at(s), Decimal(usd)) for s, usd in points],
        RateSource.SPOT_HISTORY,
        T0.date().isoformat(),
        REGION,
    )


def spot_pin(reader: SeriesTable, start: float, series_id: str = "s") -> RatePin:
    return RatePin(
        series=series_id,
        series_start=reader.integral(series_id, at(start)),
        source=RateSource.SPOT_HISTORY,
        checked_on=T0.date().isoformat(),
        region=REGION,
    )


def test_piecewise_spot_rates_along_the_series() -> None:
    reader = SeriesTable(series([(-50, "10"), (900, "20")]))
    closed = price_span("i-1", span(0, 1800), spot_pin(reader, 0), reader)
    # 900 s at $10/h + 900 s at $20/h = 2.5 + 5.0
    assert closed.eff_num == closed.list_num == Decimal(27000)
    assert segment_accrual(closed).value(acc.INSTANCE, at(1800)) == Decimal("7.5")
    running = segment_accrual(price_span("i-1", span(0, None), spot_pin(reader, 0), reader))
    assert running.clocks() == {"spot:s", acc.SECONDS_CLOCK}  # cost on the series, seconds on s
    assert running.weight(acc.INSTANCE) == {"spot:s": Decimal(1) / 3600}
    assert running.value(acc.INSTANCE, at(1800), reader.clock) == Decimal("7.5")
    assert running.value(acc.INSTANCE, at(900), reader.clock) == Decimal("2.5")


def test_spot_minimum_is_billed_at_the_closing_rate() -> None:
    reader = SeriesTable(series([(-50, "10"), (10, "20")]))
    closed = price_span("i-1", span(0, 30), spot_pin(reader, 0), reader)
    # 10 s at $10/h + 20 s at $20/h run, then 30 s of minimum at $20/h
    assert closed.billed_seconds == 60 and closed.eff_num == Decimal(100 + 400 + 600)
    assert minimum_extra(closed, reader, list_price=False) == Decimal(600) / 3600


def test_spot_series_integral_across_many_price_changes() -> None:
    # 5,000 prices, one a minute: $1.000, $1.001, ... $5.999 (a segment across all of them)
    points = [(60 * k, str(Decimal(1) + Decimal(k) / 1000)) for k in range(5000)]
    reader = SeriesTable(series(points))
    assert reader.series["s"].changes_between(at(0), at(300_000)) == 4999
    closed = price_span("i-1", span(0, 300_000), spot_pin(reader, 0), reader)
    # 60 s x sum(1 + k/1000) = 60 x (5,000 + 12,497.5) USD-seconds/hour = $291.625
    assert segment_accrual(closed).value(acc.INSTANCE, at(300_000)) == Decimal("291.625")
    running = segment_accrual(price_span("i-1", span(0, None), spot_pin(reader, 0), reader))
    assert running.value(acc.INSTANCE, at(300_000), reader.clock) == Decimal("291.625")
    # Inside a window (a day split, a rerun window): minutes 10..20 at $1.010 .. $1.019
    inside = cost_inside(closed, at(600), at(1200), reader, list_price=False)
    assert inside == Decimal(60) * sum(Decimal(1) + Decimal(k) / 1000 for k in range(10, 20)) / 3600


def test_spot_series_build_orders_points_and_drops_non_positive_prices() -> None:
    s = series([(600, "3"), (0, "2"), (300, "0")])
    assert [(p.at, p.usd) for p in s.points] == [(at(0), Decimal(2)), (at(600), Decimal(3))]
    assert s.integral(at(900)) == 2 * 600 + 3 * 300
    with pytest.raises(ValueError):
        s.integral(at(-1))


def test_cost_inside_a_window_has_no_minimum() -> None:
    short = price_span("i-1", span(0, 10), pin("36"), None)
    assert cost_inside(short, at(0), at(3600), None, list_price=False) == Decimal("0.1")
    assert minimum_extra(short, None, list_price=False) == Decimal("0.5")  # the other 50 s
    assert cost_inside(short, at(20), at(30), None, list_price=False) == 0


# -- the lifecycle fold (rule 1, event ordering, docs/cost-rules.md) -------------------------------


def test_fold_orders_by_event_time_not_arrival() -> None:
    (segment,) = fold([t("stop", 3600, "stopped"), t("run", 0, "running")]).spans
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
    (segment,) = fold(events).spans
    assert (segment.start, segment.end) == (at(0), at(100))


def test_events_of_one_second_fold_in_lifecycle_order() -> None:
    (segment,) = fold([t("b", 5, "stopped"), t("a", 5, "running"), t("p", 0, "pending")]).spans
    assert (segment.start, segment.end) == (at(5), at(5))
    assert billed_seconds(segment.start, at(5)) == 60  # still the minimum


def test_hibernating_spot_stop_bills_through_stopping_until_stopped() -> None:
    events = [t("r", 0, "running"), t("s1", 100, "stopping"), t("s2", 400, "stopped")]
    notice = Notice(event_id="n", at=at(98), action="hibernate")
    (segment,) = fold(events, [notice]).spans
    assert segment.end == at(400)
    (plain,) = fold(events).spans
    assert plain.end == at(100)
    (terminate,) = fold(events, [notice.model_copy(update={"action": "terminate"})]).spans
    assert terminate.end == at(100)


def test_late_running_after_stopped_does_not_leave_the_instance_running() -> None:
    events = [
        t("s", 500, "stopped"),
        t("r2", 1000, "running"),
        t("s2", 1100, "stopped"),
        t("r", 0, "running"),
    ]
    result = fold(events)
    assert [(s.start, s.end) for s in result.spans] == [(at(0), at(500)), (at(1000), at(1100))]
    assert result.open is None


def test_a_stop_with_no_running_before_it_bills_nothing() -> None:
    assert fold([t("s", 500, "stopped")]).spans == ()
    (only,) = fold([t("s", 500, "stopped"), t("r", 600, "running")]).spans
    assert (only.start, only.end) == (at(600), None)


def test_terminated_is_final_and_later_events_are_reported() -> None:
    result = fold(
        [
            t("r", 0, "running"),
            t("x", 100, "terminated"),
            t("late", 200, "running"),
            t("late-stop", 300, "stopped"),
        ]
    )
    (segment,) = result.spans
    assert (segment.start, segment.end, result.terminated_at) == (at(0), at(100), at(100))
    assert [a.event_id for a in result.after_terminated] == ["late", "late-stop"]
    assert result.open is None


# -- EBS (rule 3) --------------------------------------------------------------------------

NOV = datetime(2026, 11, 1, tzinfo=UTC)
DEC = datetime(2026, 12, 1, tzinfo=UTC)


def ebs_head(
    *volumes: Volume,
    rates: dict[str, tuple[str | None, str | None, str | None]],
    terminated: datetime | None = DEC,
) -> InstanceHead:
    """A head whose instance ran from Nov 1 (terminated Dec 1: a whole 30-day month)."""
    profile = InstanceProfile(
        instance_id="i-1", instance_type="trn1.32xlarge", region=REGION, volumes=volumes
    )
    volume_rates = tuple(
        VolumeRates(
            volume_id=v,
            size=rate(s) if s else None,
            iops=rate(i) if i else None,
            throughput=rate(tp) if tp else None,
        )
        for v, (s, i, tp) in rates.items()
    )
    return InstanceHead(
        profile=profile,
        job_id="j",
        first_running_at=NOV,
        terminated_at=terminated,
        volume_rates=volume_rates,
    )


def test_ebs_accrues_from_first_running_to_terminated_including_stopped_time() -> None:
    vol = Volume(volume_id="v", size_gib=100, volume_type="gp3")
    head = ebs_head(vol, rates={"v": ("0.08", None, None)}, terminated=NOV + timedelta(days=3))
    # 100 GiB x $0.08 x 3 days of a 30-day month, whatever ran or stopped in between
    assert ebs_accrual(head).value(acc.EBS, DEC) == Decimal("0.8")
    running = head.model_copy(update={"terminated_at": None})
    assert ebs_accrual(running).value(acc.EBS, NOV + timedelta(days=15)) == Decimal(4)
    never_ran = head.model_copy(update={"first_running_at": None})
    assert ebs_accrual(never_ran).terms == {}


def test_io2_provisioned_iops_are_priced_per_iops_month() -> None:
    vol = Volume(volume_id="v", size_gib=100, volume_type="io2", iops=16000)
    head = ebs_head(vol, rates={"v": ("0.125", "0.065", None)})
    # 100 x $0.125 + 16,000 x $0.065 for the whole of November
    assert ebs_accrual(head).value(acc.EBS, DEC) == Decimal("1052.5")
    assert provisioned_iops(vol) == 16000 and provisioned_throughput(vol) == 0


def test_gp3_charges_only_iops_and_throughput_above_the_baseline() -> None:
    vol = Volume(volume_id="v", size_gib=512, volume_type="gp3", iops=6000, throughput=250)
    head = ebs_head(vol, rates={"v": ("0.08", "0.005", "0.04")})
    # 512 x $0.08 + (6,000 - 3,000) x $0.005 + (250 - 125) MB/s x $0.04
    assert ebs_accrual(head).value(acc.EBS, DEC) == Decimal("60.96")
    baseline = Volume(volume_id="v", size_gib=512, volume_type="gp3", iops=3000, throughput=125)
    assert (provisioned_iops(baseline), provisioned_throughput(baseline)) == (0, 0)
    plain = ebs_head(baseline, rates={"v": ("0.08", None, None)})
    assert ebs_accrual(plain).value(acc.EBS, DEC) == Decimal("40.96")
    assert not [c for (c, _, _) in ebs_accrual(plain).terms if c.startswith("unconfirmed:")]


def test_a_missing_iops_figure_or_rate_is_unconfirmed_and_the_size_still_priced() -> None:
    no_figure = Volume(volume_id="v", size_gib=100, volume_type="io2")
    accrual = ebs_accrual(ebs_head(no_figure, rates={"v": ("0.125", "0.065", None)}))
    assert provisioned_iops(no_figure) is None
    assert accrual.value(acc.EBS, DEC) == Decimal("12.5")
    assert accrual.value("unconfirmed:ebs_iops:io2:us-east-1", DEC) == 1
    no_rate = Volume(volume_id="v", size_gib=100, volume_type="gp3", iops=4000, throughput=200)
    accrual = ebs_accrual(ebs_head(no_rate, rates={"v": ("0.08", None, None)}))
    assert accrual.value(acc.EBS, DEC) == Decimal(8)
    assert accrual.value("unconfirmed:ebs_iops:gp3:us-east-1", DEC) == 1
    assert accrual.value("unconfirmed:ebs_throughput:gp3:us-east-1", DEC) == 1


def test_a_volume_type_with_no_price_is_unpriced_never_zero_and_never_a_crash() -> None:
    odd = Volume(volume_id="v", size_gib=100, volume_type="st9")
    accrual = ebs_accrual(ebs_head(odd, rates={}))
    assert accrual.value(acc.EBS, DEC) == 0
    assert accrual.value("unpriced:ebs:st9:us-east-1", DEC) == 1


def test_the_price_book_gives_configured_provisioned_performance_rates() -> None:
    config = LedgerConfig(
        live_prices=False,
        prices=PriceOverrides(
            ebs_gb_month={"io2": Decimal("0.125")},
            ebs_iops_month={"io2": Decimal("0.065"), "gp3": Decimal("0.005")},
            ebs_throughput_month={"gp3": Decimal("0.04")},
        ),
    )
    book = PriceBook(config, memory_price_cache(), None, bundled_snapshot(), T0.date())
    profile = InstanceProfile(
        instance_id="i-1",
        instance_type="trn1.32xlarge",
        region=REGION,
        volumes=(
            Volume(volume_id="a", size_gib=100, volume_type="io2", iops=16000),
            Volume(volume_id="b", size_gib=512, volume_type="gp3", iops=6000, throughput=250),
            Volume(volume_id="c", size_gib=8, volume_type="gp3"),
        ),
    )
    a, b, c = book.volume_rates(profile)
    assert a.size is not None and a.iops is not None and a.throughput is None
    assert (a.size.list_usd, a.iops.list_usd, a.iops.source.value) == (
        Decimal("0.125"),
        Decimal("0.065"),
        "override",
    )
    assert b.size is not None and b.size.source.value == "snapshot"  # gp3 size from the snapshot
    assert b.iops is not None and b.throughput is not None
    assert (b.iops.list_usd, b.throughput.list_usd) == (Decimal("0.005"), Decimal("0.04"))
    assert c.iops is None and c.throughput is None  # baseline gp3: nothing to price


# -- accruals and their stored form ---------------------------------------------------------


def test_accrual_add_minus_and_value() -> None:
    closed = Accrual().fixed(acc.INSTANCE, acc.SECONDS_CLOCK, 3600, 7200)  # $2
    running = Accrual().linear(
        acc.INSTANCE, acc.SECONDS_CLOCK, 3600, Decimal(36), seconds_clock(at(0))
    )  # $36/h from T0
    assert closed.value(acc.INSTANCE, at(100)) == 2
    assert running.value(acc.INSTANCE, at(100)) == 1
    both = acc.total([closed, running])
    assert both.value(acc.INSTANCE, at(100)) == 3 and both.value(acc.INSTANCE, at(200)) == 4
    assert both.weight(acc.INSTANCE) == {"s": Decimal(36) / 3600}
    assert both.is_open() and not closed.is_open()
    less = both.minus(running)
    assert less.value(acc.INSTANCE, at(5000)) == 2 and not less.is_open()
    assert both.value(acc.INSTANCE, at(100)) == 3  # minus leaves its operands alone
    assert list(both.minus(both).nonzero()) == []
    assert both.value(acc.EBS, at(100)) == 0  # another component
    # Different denominators are different terms; a value sums them.
    mixed = Accrual().fixed(acc.STORAGE, acc.MONTH_CLOCK, 10, 5).fixed(acc.STORAGE, "s", 4, 1)
    assert len(mixed.terms) == 2 and mixed.value(acc.STORAGE, at(0)) == Decimal("0.75")


def test_a_rollup_is_the_sum_of_its_records_deltas() -> None:
    """What a rollup keeps: the sum of (new - old) accruals of its records."""
    first = segment_accrual(price_span("i-1", span(0, None), pin("36"), None))
    closed = segment_accrual(price_span("i-1", span(0, 600), pin("36"), None))
    rollup = Accrual().add(first).add(closed.minus(first))
    assert rollup.value(acc.INSTANCE, at(10**6)) == Decimal(6)
    assert not rollup.is_open()


def test_to_attributes_and_from_attributes_round_trip() -> None:
    accrual = (
        Accrual()
        .fixed(acc.INSTANCE, acc.SECONDS_CLOCK, 3600, Decimal("1290.00"))
        .linear(
            acc.INSTANCE,
            "spot:live:us-west-1a:m1.xlarge:Linux/UNIX",
            3600,
            1,
            Decimal("123456.789"),
        )
        .linear(acc.EBS, acc.MONTH_CLOCK, MONTH_UNITS, Decimal("40.96"), month_clock(at(0)))
        .fixed("unpriced:ec2:trn2.48xlarge:us-east-1", acc.SECONDS_CLOCK, 1, 1)
    )
    stored = acc.to_attributes(accrual)
    assert all(name.startswith("a|") for name in stored)
    item = {"pk": "JOB#j", "sk": "R#1", "kind": "rollup", "tags": {"a": "b"}, **stored}
    back = acc.from_attributes(item)  # other attributes of the item are not terms
    assert dict(back.nonzero()) == dict(accrual.nonzero())
    # As DynamoDB hands them back (numbers as Decimal strings), and summed as ADD does.
    as_strings = {k: str(v) for k, v in stored.items()}
    doubled = acc.from_attributes({k: 2 * v for k, v in stored.items()})
    assert dict(acc.from_attributes(as_strings).nonzero()) == dict(accrual.nonzero())
    now = at(86400)
    reader = SeriesTable(
        SpotSeries.build(
            "live:us-west-1a:m1.xlarge:Linux/UNIX",
            [(at(-(10**6)), Decimal("0.08"))],
            RateSource.SPOT_HISTORY,
            "2026-11-01",
            REGION,
        )
    )
    for component in (acc.INSTANCE, acc.EBS):
        assert close(
            doubled.value(component, now, reader.clock),
            2 * accrual.value(component, now, reader.clock),
        )
    assert acc.to_attributes(Accrual()) == {}
