"""The ledger's side of forecasts (shared/services/forecasts.py): a job's facts from its
rollups, declared lengths, and a forecast re-sent only when the crossing is an hour
earlier."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from shared.services.forecasts import declared_hours, forecast_revision, job_facts

T0 = datetime(2026, 11, 1, tzinfo=UTC)
TAG = "expected-duration-hours"


def test_declared_hours_are_positive_numbers_only() -> None:
    assert declared_hours("16") == Decimal(16)
    assert declared_hours(" 2.5 ") == Decimal("2.5")
    for bad in (None, "", "soon", "-3", "0", "NaN", "Infinity", "99999"):
        assert declared_hours(bad) is None, bad


def test_a_jobs_facts_come_from_its_rollups_in_every_account() -> None:
    rollups = [
        {
            "first_event_at": (T0 + timedelta(hours=1)).isoformat(),
            "last_event_at": (T0 + timedelta(hours=5)).isoformat(),
            "tags": {TAG: "16"},
            "tags_from": "0",
        },
        {
            "first_event_at": T0.isoformat(),
            "last_event_at": (T0 + timedelta(hours=3)).isoformat(),
            "tags": {},
            "tags_from": "0",
        },
    ]
    facts = job_facts("sft", rollups, True, T0 + timedelta(hours=9), TAG)
    assert (facts.first_event_at, facts.last_event_at) == (T0, T0 + timedelta(hours=5))
    assert facts.declared_hours == Decimal(16) and facts.running


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
