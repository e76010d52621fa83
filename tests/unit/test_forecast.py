"""The one budget forecast (shared/domain/forecast.py): declared ends, an assumed length
otherwise, crossings of the central projection, a range, and no drift with the clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.domain.forecast import (
    BudgetForecast,
    DurationPrior,
    JobFacts,
    budget_forecast,
    project_job,
)
from shared.services.budgets import duration_prior

T0 = datetime(2026, 11, 1, tzinfo=UTC)
PRIOR = DurationPrior(median_hours=24, sigma=1.0)  # a log-normal candidate
PRODUCT = duration_prior()  # the one the budgets use


def linear(rates: dict[str, Decimal], starts: dict[str, datetime], stopped: dict[str, datetime]):  # type: ignore[no-untyped-def]
    """Each job's spend at its burn from its start (to its stop when it has stopped)."""

    def spend_at(job_id: str, moment: datetime) -> Decimal:
        end = min(moment, stopped.get(job_id, moment))
        seconds = max((end - starts[job_id]).total_seconds(), 0)
        return rates[job_id] * Decimal(int(seconds)) / 3600

    return spend_at


def llama(now: datetime, declared: bool) -> BudgetForecast:
    """sft $21.50/h from 00:00, dpo $55.04/h from 02:00; declared 16 h and 14 h."""
    starts = {"sft": T0, "dpo": T0 + timedelta(hours=2)}
    facts = [
        JobFacts(
            job_id=job,
            running=True,
            first_event_at=start,
            last_event_at=start,
            declared_hours=Decimal(hours) if declared else None,
        )
        for (job, start), hours in zip(starts.items(), ("16", "14"), strict=True)
    ]
    spend_at = linear({"sft": Decimal("21.50"), "dpo": Decimal("55.04")}, starts, {})
    return budget_forecast(facts, spend_at, Decimal(1000), (50, 80, 100), (T0, None), PRIOR, now)


def test_declared_ends_give_the_final_total_and_the_real_crossings() -> None:
    """1,114.56 = 21.50 x 16 + 55.04 x 14; 100 % at 1,110.08 / 76.54 h = 14:30:11.8."""
    forecast = llama(T0 + timedelta(hours=4), declared=True)
    assert forecast.total_usd == forecast.low_usd == forecast.high_usd == Decimal("1114.56")
    hundred = forecast.crossing(100)
    assert hundred is not None and hundred.state == "projected"
    assert hundred.at == datetime(2026, 11, 1, 14, 30, 12, tzinfo=UTC)
    assert [j.method for j in forecast.jobs] == ["declared_end", "declared_end"]
    assert forecast.next_crossing() == forecast.crossing(50)


def test_without_declared_ends_the_stated_assumption_and_a_range() -> None:
    forecast = llama(T0 + timedelta(hours=3), declared=False)
    assert forecast.low_usd < forecast.total_usd < forecast.high_usd
    assert {j.method for j in forecast.jobs} == {"assumed_duration"}
    assert "24 h (median" in forecast.assumption
    sft = next(j for j in forecast.jobs if j.job_id == "sft")
    assert sft.end == T0 + timedelta(hours=24)  # the median of a job known to have started
    assert "80 % interval" in forecast.range_meaning


def test_a_job_past_its_low_end_is_projected_from_the_age_it_reached() -> None:
    facts = JobFacts(job_id="j", running=True, first_event_at=T0, last_event_at=T0)
    young = project_job(facts, PRIOR, T0 + timedelta(hours=1), None)
    old = project_job(facts, PRIOR, young.low_end + timedelta(seconds=1), None)
    assert old.known_hours == pytest.approx((young.low_end - T0).total_seconds() / 3600)
    assert old.low_end > young.low_end and old.end > young.end


def test_a_job_past_its_declared_end_falls_back_to_the_assumption() -> None:
    facts = JobFacts(
        job_id="j",
        running=True,
        first_event_at=T0,
        last_event_at=T0,
        declared_hours=Decimal(2),
    )
    projection = project_job(facts, PRIOR, T0 + timedelta(hours=3), None)
    assert projection.method == "assumed_duration" and projection.past_declared_end
    assert projection.known_hours >= 2
    assert "past its declared end" in projection.describe()


def test_the_products_assumption_runs_a_job_as_long_again_as_it_is_known_to_have_run() -> None:
    facts = JobFacts(
        job_id="j", running=True, first_event_at=T0, last_event_at=T0 + timedelta(hours=4)
    )
    projection = project_job(facts, PRODUCT, T0 + timedelta(hours=4, minutes=5), None)
    assert projection.end == T0 + timedelta(hours=8)
    assert projection.high_end == T0 + timedelta(hours=40)
    assert "as long again as it is known to have run" in PRODUCT.describe()


def test_ends_stop_at_the_period_end() -> None:
    facts = JobFacts(job_id="j", running=True, first_event_at=T0, last_event_at=T0)
    end = T0 + timedelta(hours=5)
    projection = project_job(facts, PRIOR, T0 + timedelta(hours=1), end)
    assert projection.high_end == end


# Generated scenarios: up to 6 jobs, running or stopped, with or without a declared end.
job_strategy = st.tuples(
    st.integers(min_value=0, max_value=72 * 60),  # start, minutes after T0
    st.sampled_from(["1.21", "5.67", "21.50", "55.04", "98.32"]),
    st.one_of(st.none(), st.integers(min_value=1, max_value=200)),  # declared hours
    st.one_of(st.none(), st.integers(min_value=1, max_value=100 * 60)),  # stopped after
    st.integers(min_value=0, max_value=24 * 60),  # its last event, minutes after its start
)
scenario_strategy = st.tuples(
    st.lists(job_strategy, min_size=1, max_size=6),
    st.integers(min_value=1, max_value=20_000),  # the amount
    st.integers(min_value=0, max_value=200 * 60),  # the tick, minutes after the last event
    st.booleans(),  # a month period (else total)
    st.sampled_from([PRODUCT, PRIOR]),
)


Scenario = tuple[list[tuple[int, str, int | None, int | None, int]], int, int, bool, DurationPrior]


def _forecast_of(
    scenario: Scenario,
    tick: timedelta | None = None,
) -> tuple[BudgetForecast, datetime, Any]:
    jobs, amount, after, monthly, prior = scenario
    starts, rates, stopped, facts = {}, {}, {}, []
    for n, (start_min, rate, declared, stop_min, last_min) in enumerate(jobs):
        job_id = f"j{n}"
        start = T0 + timedelta(minutes=start_min)
        starts[job_id], rates[job_id] = start, Decimal(rate)
        last = start + timedelta(minutes=last_min)
        if stop_min is not None:
            stopped[job_id] = start + timedelta(minutes=stop_min)
            last = stopped[job_id]
        facts.append(
            JobFacts(
                job_id=job_id,
                running=stop_min is None,
                first_event_at=start,
                last_event_at=last,
                declared_hours=Decimal(declared) if declared else None,
            )
        )
    delivered = max(f.last_event_at for f in facts)
    now = delivered + (tick if tick is not None else timedelta(minutes=after))
    period = (T0, datetime(2026, 12, 1, tzinfo=UTC)) if monthly else (T0, None)
    if period[1] is not None and now >= period[1]:
        now = period[1] - timedelta(minutes=1)
    now = max(now, delivered)
    spend_at = linear(rates, starts, stopped)
    forecast = budget_forecast(facts, spend_at, Decimal(amount), (50, 80, 100), period, prior, now)
    return forecast, now, (facts, spend_at, Decimal(amount), period, prior)


@settings(max_examples=300, deadline=None)
@given(scenario_strategy)
def test_a_central_total_under_the_amount_never_crosses_100_and_the_reverse(
    scenario: Scenario,
) -> None:
    forecast, _, (_, _, amount, _, _) = _forecast_of(scenario)
    hundred = forecast.crossing(100)
    assert hundred is not None
    if forecast.total_usd < amount:
        assert hundred.state in ("not_projected", "possible") and hundred.at is None
    else:
        assert hundred.state in ("crossed", "projected")
    assert forecast.low_usd <= forecast.total_usd <= forecast.high_usd
    if hundred.state == "possible":
        assert hundred.high_at is not None and forecast.high_usd >= amount


@settings(max_examples=200, deadline=None)
@given(scenario_strategy, st.integers(min_value=0, max_value=10_000))
def test_between_two_deliveries_every_tick_gives_the_same_forecast(
    scenario: Scenario,
    later_seconds: int,
) -> None:
    """From a tick to any later one before ``revises_at`` (no new fact in between): the
    same total, range, ends and crossing moments, except crossings that became past."""
    first, now, (facts, spend_at, amount, period, prior) = _forecast_of(scenario)
    later = now + timedelta(seconds=later_seconds)
    if first.revises_at is not None:
        later = min(later, first.revises_at - timedelta(seconds=1))
    if period[1] is not None:
        later = min(later, period[1] - timedelta(seconds=1))
    later = max(later, now)
    second = budget_forecast(facts, spend_at, amount, (50, 80, 100), period, prior, later)
    assert second.model_dump(exclude={"crossings"}) == first.model_dump(exclude={"crossings"})
    for before, after in zip(first.crossings, second.crossings, strict=True):
        if after.state == "crossed":
            assert before.state == "crossed" or (before.at is not None and before.at <= later)
        else:
            assert after == before
