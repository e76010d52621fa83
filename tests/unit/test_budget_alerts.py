"""Forecast alerts (shared/services/budget_alerts.py): the subject and the body give the
same crossing moment, the one forecast's."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from hypothesis import given, settings

from shared.config.budgets import Budget, BudgetScope
from shared.domain.forecast import BudgetForecast
from shared.reports.formatting import iso
from shared.services.budget_alerts import forecast_alert
from shared.services.budgets import BudgetStatus
from tests.unit.test_forecast import PRODUCT, T0, Scenario, _forecast_of, scenario_strategy

MOMENT = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"


def status_of(forecast: BudgetForecast, amount: Decimal, spend: Decimal) -> BudgetStatus:
    budget = Budget(budget_id="b", scope=BudgetScope(account=True), amount_usd=amount)
    return BudgetStatus(budget, "total", T0, None, spend, Decimal(1), {"j0": spend}, forecast)


@settings(max_examples=200, deadline=None)
@given(scenario_strategy)
def test_subject_and_body_give_the_same_crossing(
    scenario: Scenario,
) -> None:
    forecast, now, (_, _, amount, _, _) = _forecast_of(scenario)
    spend = Decimal(0)  # a forecast alert is for a budget not yet crossed
    alert = forecast_alert(status_of(forecast, amount, spend), now, (0, None))
    hundred = forecast.crossing(100)
    assert hundred is not None
    if hundred.state != "projected":
        assert alert is None
        return
    assert alert is not None
    (in_subject,) = re.findall(rf"100 % at ({MOMENT})", alert.subject)
    in_body = re.findall(rf"100 %: projected at ({MOMENT})", alert.message)
    assert in_body == [in_subject] == [iso(hundred.at)]
    assert alert.attributes["projected_crossing_at"] == in_subject


def test_the_body_names_the_range_and_each_jobs_method() -> None:
    forecast, now, (_, _, amount, _, _) = _forecast_of(
        ([(0, "55.04", None, None, 0), (60, "21.50", 10, None, 0)], 300, 60, False, PRODUCT),
        tick=timedelta(minutes=30),
    )
    alert = forecast_alert(status_of(forecast, amount, Decimal(0)), now, (0, None))
    assert alert is not None
    assert "range $" in alert.message and "80 % interval" in alert.message
    assert "j0: assumed length" in alert.message
    assert "j1: to its declared end 2026-11-01T11:00:00Z (10 h)" in alert.message
    assert now == datetime(2026, 11, 1, 1, 30, tzinfo=UTC)
