"""The finance day (cost rule 12), worked by hand: a day of the configured IANA zone as
its UTC bounds, 23 or 25 hours across daylight saving; month budgets on that calendar;
FOCUS rows cut at a UTC month start; daily schedules on the zone's local clock."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from pydantic import ValidationError

from shared.app.functions import schedules
from shared.config.budgets import Budget
from shared.config.ledger import LedgerConfig
from shared.domain.budgets import period_bounds
from shared.domain.finance_day import FinanceCalendar, calendar_of, utc_month_pieces

SEOUL = FinanceCalendar("Asia/Seoul")
NEW_YORK = FinanceCalendar("America/New_York")
H = timedelta(hours=1)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_a_seoul_day_runs_from_15z_to_15z() -> None:
    start, end = SEOUL.bounds(date(2026, 11, 2))
    assert (start, end) == (at("2026-11-01T15:00:00Z"), at("2026-11-02T15:00:00Z"))
    assert SEOUL.day_of(at("2026-11-01T14:59:59Z")) == date(2026, 11, 1)
    assert SEOUL.day_of(at("2026-11-01T15:00:00Z")) == date(2026, 11, 2)


def test_new_york_november_change_makes_a_25_hour_day_and_march_a_23_hour_one() -> None:
    # 2026-11-01 02:00 EDT -> 01:00 EST; 2026-03-08 02:00 EST -> 03:00 EDT.
    start, end = NEW_YORK.bounds(date(2026, 11, 1))
    assert (start, end) == (at("2026-11-01T04:00:00Z"), at("2026-11-02T05:00:00Z"))
    assert end - start == 25 * H
    spring = NEW_YORK.bounds(date(2026, 3, 8))
    assert spring[1] - spring[0] == 23 * H
    assert NEW_YORK.next_day_start(at("2026-11-01T12:00:00Z")) == at("2026-11-02T05:00:00Z")


def test_utc_is_the_default_and_an_unknown_zone_is_a_clear_error() -> None:
    assert LedgerConfig().finance_timezone == "UTC"
    assert calendar_of(LedgerConfig()).bounds(date(2026, 11, 1)) == (
        at("2026-11-01T00:00:00Z"),
        at("2026-11-02T00:00:00Z"),
    )
    with pytest.raises(ValidationError, match="unknown IANA time zone 'Mars/Olympus'"):
        LedgerConfig(finance_timezone="Mars/Olympus")
    with pytest.raises(ValidationError, match="not an IANA time zone name"):
        LedgerConfig(finance_timezone="../etc/passwd")


def test_month_and_day_budget_periods_follow_the_finance_calendar() -> None:
    month = Budget.model_validate(
        {"budget_id": "m", "scope": {"account": True}, "amount_usd": "100", "period": "month"}
    )
    # 2026-12-01T03:00Z is still 22:00 on 30 November in New York.
    assert period_bounds(month, at("2026-12-01T03:00:00Z"), NEW_YORK) == (
        at("2026-11-01T04:00:00Z"),  # EDT until the 1st's change
        at("2026-12-01T05:00:00Z"),  # EST
        "2026-11",
    )
    assert period_bounds(month, at("2026-12-01T03:00:00Z"))[2] == "2026-12"  # UTC
    day = month.model_copy(update={"period": "day"})
    assert period_bounds(day, at("2026-11-01T16:00:00Z"), SEOUL) == (
        at("2026-11-01T15:00:00Z"),
        at("2026-11-02T15:00:00Z"),
        "2026-11-02",
    )


def test_a_finance_day_is_cut_at_the_utc_month_start_inside_it() -> None:
    start, end = SEOUL.bounds(date(2026, 12, 1))  # [11-30T15:00Z, 12-01T15:00Z)
    assert utc_month_pieces(start, end) == [
        (at("2026-11-30T15:00:00Z"), at("2026-12-01T00:00:00Z")),
        (at("2026-12-01T00:00:00Z"), at("2026-12-01T15:00:00Z")),
    ]
    assert utc_month_pieces(*SEOUL.bounds(date(2026, 11, 20))) == [SEOUL.bounds(date(2026, 11, 20))]


def test_finance_day_schedules_fire_on_the_local_clock() -> None:
    by_name = {s.function: s for s in schedules("00:15", "America/New_York")}
    summary, boundary = by_name["daily_summary"], by_name["day_boundary"]
    assert summary.local and boundary.local
    assert not by_name["reservation_refresh"].local  # the other daily work stays on UTC
    # 00:15 local: 04:15Z in EDT, 05:15Z after the change on 1 November.
    assert summary.next_after(at("2026-10-31T12:00:00Z")) == at("2026-11-01T04:15:00Z")
    assert summary.next_after(at("2026-11-01T04:15:00Z")) == at("2026-11-02T05:15:00Z")
    assert boundary.next_after(at("2026-11-01T04:00:00Z")) == at("2026-11-02T05:00:00Z")
    assert summary.count_between(at("2026-10-31T00:00:00Z"), at("2026-11-03T00:00:00Z")) == 3
    assert summary.scheduler_expression() == "cron(15 0 * * ? *)"
    utc_summary = {s.function: s for s in schedules("00:15")}["daily_summary"]
    assert not utc_summary.local
    assert utc_summary.next_after(at("2026-11-01T00:00:00Z")) == datetime(
        2026, 11, 1, 0, 15, tzinfo=UTC
    )
