"""Honest forecasts (shared/services/forecasts.py): declared ends, else the job's own run
pattern; a forecast is re-sent only when the projected crossing is an hour earlier."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from shared.domain import accrual as acc
from shared.domain.clock import seconds_clock
from shared.services.forecasts import (
    declared_hours,
    forecast,
    forecast_revision,
    project_job,
    revision_possible,
)

T0 = datetime(2026, 11, 1, tzinfo=UTC)
TAG = "expected-duration-hours"


def running(rate: str, since: datetime) -> acc.Accrual:
    """An instance running at ``rate`` $/h since ``since`` (USD = rate x seconds / 3600)."""
    return acc.Accrual().linear(
        acc.INSTANCE, acc.SECONDS_CLOCK, 3600, Decimal(rate), seconds_clock(since)
    )


def total(accrual: acc.Accrual, at: datetime) -> Decimal:
    return accrual.value(acc.INSTANCE, at)


def rollups(start: datetime, **tags: str) -> list[dict[str, object]]:
    return [{"first_event_at": start.isoformat(), "tags": tags, "tags_from": "0"}]


def test_declared_hours_are_positive_numbers_only() -> None:
    assert declared_hours("16") == Decimal(16)
    assert declared_hours(" 2.5 ") == Decimal("2.5")
    for bad in (None, "", "soon", "-3", "0", "NaN", "Infinity", "99999"):
        assert declared_hours(bad) is None, bad


def test_a_declared_job_is_projected_to_its_end_and_others_by_their_run_so_far() -> None:
    now = T0 + timedelta(hours=4)
    sft = running("21.50", T0)
    declared = project_job("sft", rollups(T0, **{TAG: "16"}), sft, now, None, TAG)
    assert (declared.method, declared.until) == ("declared", T0 + timedelta(hours=16))
    assert "declared end 2026-11-01T16:00:00Z" in declared.how
    pattern = project_job("sft", rollups(T0), sft, now, None, TAG)
    assert (pattern.method, pattern.until) == ("run_pattern", T0 + timedelta(hours=8))
    overrun = project_job("sft", rollups(T0, **{TAG: "2"}), sft, now, None, TAG)
    assert overrun.method == "run_pattern" and "past its declared end" in overrun.how
    capped = project_job("sft", rollups(T0), sft, now, T0 + timedelta(hours=6), TAG)
    assert capped.until == T0 + timedelta(hours=6) and "period's end" in capped.how


def test_the_projection_and_its_crossing_follow_each_jobs_end() -> None:
    """sft $21.50/h to 16:00, dpo $55.04/h from 02:00 to 16:00 (declared): at 04:00 the
    projection is the final $1,114.56 and 100 % of $1,000 is crossed at 14:30:12 (the
    first whole second at or after 1,110.08 / 76.54 h = 14:30:11.8)."""
    now = T0 + timedelta(hours=4)
    sft, dpo = running("21.50", T0), running("55.04", T0 + timedelta(hours=2))
    spend = total(sft, now) + total(dpo, now)
    projections = [
        project_job("sft", rollups(T0, **{TAG: "16"}), sft, now, None, TAG),
        project_job("dpo", rollups(T0 + timedelta(hours=2), **{TAG: "14"}), dpo, now, None, TAG),
    ]
    result = forecast(spend, Decimal(1000), projections, now, total)
    assert result.total == Decimal("1114.56")
    assert result.crossing == datetime(2026, 11, 1, 14, 30, 12, tzinfo=UTC)
    assert forecast(spend, Decimal(2000), projections, now, total).crossing is None


def test_a_forecast_is_resent_only_when_the_crossing_is_an_hour_earlier() -> None:
    base = "forecast:b:total"
    first = T0 + timedelta(hours=15)
    assert forecast_revision((0, None), base, first) == base
    assert forecast_revision((1, first), base, first - timedelta(minutes=59)) is None
    assert forecast_revision((1, first), base, first + timedelta(hours=3)) is None
    assert forecast_revision((1, first), base, first - timedelta(hours=1)) == f"{base}:2"
    assert forecast_revision((2, first - timedelta(hours=1)), base, first - timedelta(
        hours=1, minutes=30)) is None  # fmt: skip
    assert forecast_revision((1, first), base, None) is None


def test_no_revision_can_come_earlier_than_the_crossing_at_the_current_burn() -> None:
    first = T0 + timedelta(hours=15)
    assert revision_possible((1, first), first - timedelta(hours=2))
    assert not revision_possible((1, first), first - timedelta(minutes=30))
