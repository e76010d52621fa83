"""Budget alerts by replay, against crossings worked out by hand.

Scenario tests/scenarios/budget_llama.json (make_budget.py): budget llama-total, scope
project=llama, $1,000 total, thresholds 50/80/100. llama-sft: trn1.32xlarge at $21.50/h
from 00:00; llama-dpo: p5.48xlarge at $55.04/h from 02:00; both stop at 16:00.
Spend at t hours (t >= 2): 21.50 t + 55.04 (t - 2) = 76.54 t - 110.08.
  50 %:  t = 610.08 / 76.54 = 7.970747 h -> 07:58:14.7
  80 %:  t = 910.08 / 76.54 = 11.890253 h -> 11:53:24.9
  100 %: t = 1110.08 / 76.54 = 14.503528 h -> 14:30:12.7
Forecast, no declared ends: each job is assumed to run as long again as it is known to
have run (the median of the stated Pareto assumption; no checkpoints, so what is known
is stepped to the low end of its range each time the clock passes it). The central
projection first exceeds $1,000 at 08:14 ($1,014.35, crossing 15:47:35); at 08:40 llama-dpo
outlives its range's low end and the crossing moves to the real one, 14:30:12, over an
hour earlier: one revision. Both ranges hold the final $1,114.56.

budget_llama_declared.json: the same runs declaring 16 h and 14 h: the projection is the
final total from 02:00 on: one forecast (02:01), crossing 14:30:12.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from costtracker.replay import replay
from costtracker.scenario import Scenario
from tests.integration.conftest import scenario_dict

DAY = datetime(2026, 11, 1, tzinfo=UTC)
CROSSINGS = {
    50: DAY + timedelta(hours=610.08 / 76.54),
    80: DAY + timedelta(hours=910.08 / 76.54),
    100: DAY + timedelta(hours=1110.08 / 76.54),
}


def at(alert: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(alert["at"].replace("Z", "+00:00"))


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return replay(Scenario.model_validate(scenario_dict("budget_llama.json")))


def test_three_budget_alerts_each_within_a_second_after_the_predicted_crossing(
    document: dict[str, Any],
) -> None:
    budget = [a for a in document["alerts"] if a["kind"] == "budget"]
    assert [a["threshold"] for a in budget] == [50, 80, 100]
    assert [a["at"] for a in budget] == [
        "2026-11-01T07:58:15Z",
        "2026-11-01T11:53:25Z",
        "2026-11-01T14:30:12Z",
    ]
    for alert in budget:
        delay = at(alert) - CROSSINGS[alert["threshold"]]
        assert timedelta(0) <= delay <= timedelta(seconds=1), (alert, delay)
        assert alert["budget_id"] == "llama-total"
    assert budget[1]["subject"].startswith("Budget llama-total at 80 %: $8")
    assert budget[1]["subject"].endswith(" of $1,000.00")


FINAL_TOTAL = Decimal("1114.56")  # 21.50 x 16 + 55.04 x 14


def test_forecasts_with_their_range_and_the_real_crossing(document: dict[str, Any]) -> None:
    forecasts = [a for a in document["alerts"] if a["kind"] == "forecast"]
    assert [(f["alert_id"], f["at"], f["projected_crossing_at"]) for f in forecasts] == [
        ("forecast:llama-total:total", "2026-11-01T08:14:00Z", "2026-11-01T15:47:35Z"),
        ("forecast:llama-total:total:2", "2026-11-01T08:40:00Z", "2026-11-01T14:30:12Z"),
    ]
    assert [f["projected_total_usd"] for f in forecasts] == ["1014.35", "1087.74"]
    for forecast in forecasts:
        low, high = Decimal(forecast["projected_low_usd"]), Decimal(forecast["projected_high_usd"])
        assert low <= FINAL_TOTAL <= high
        assert "llama-sft: assumed length, known to have run 8.2 h" in forecast["body"]
        moment = forecast["projected_crossing_at"]
        assert f"100 %: projected at {moment}" in forecast["body"]
        assert forecast["subject"].endswith(f"(100 % at {moment})")
    assert sum(Decimal(str(j["cost_usd"]["total"])) for j in document["jobs"]) == FINAL_TOTAL


def test_with_declared_ends_every_forecast_is_within_25_percent_of_the_final_total() -> None:
    declared = replay(Scenario.model_validate(scenario_dict("budget_llama_declared.json")))
    forecasts = [a for a in declared["alerts"] if a["kind"] == "forecast"]
    assert forecasts
    for forecast in forecasts:
        projected = Decimal(forecast["projected_total_usd"])
        assert abs(projected - FINAL_TOTAL) <= FINAL_TOTAL / 4, forecast
        assert "to its declared end" in forecast["body"]
    (forecast,) = forecasts
    assert DAY + timedelta(hours=2) <= at(forecast) < CROSSINGS[100]
    assert forecast["projected_crossing_at"] == "2026-11-01T14:30:12Z"
    assert forecast["projected_low_usd"] == forecast["projected_high_usd"] == "1114.56"
    assert sum(Decimal(str(j["cost_usd"]["total"])) for j in declared["jobs"]) == FINAL_TOTAL


def test_shuffled_and_duplicated_delivery_gives_the_same_alerts(
    document: dict[str, Any],
) -> None:
    shuffled = replay(Scenario.model_validate(scenario_dict("budget_llama_shuffled.json")))
    assert shuffled["alerts"] == document["alerts"]


def test_skipping_quiet_ticks_changes_nothing() -> None:
    """The replay skips budget ticks a handler declared quiet; running them all gives the
    same document (a short variant: a $200 budget, 4 simulated hours)."""
    data = scenario_dict("budget_llama.json")
    data["budgets"][0]["amount_usd"] = "200"
    data["until"] = "2026-11-01T04:00:00Z"
    data["events"] = [e for e in data["events"] if e["time"] <= data["until"]]
    fast = replay(Scenario.model_validate(data))
    full = replay(Scenario.model_validate(data), skip_quiet=False)
    assert fast["diagnostics"]["scheduled_runs_skipped"]["budget_tick"] > 0
    assert full["diagnostics"]["scheduled_runs"]["budget_tick"] == 240
    assert [(a["kind"], a["at"], a["threshold"]) for a in fast["alerts"]] == [
        (a["kind"], a["at"], a["threshold"]) for a in full["alerts"]
    ]
    assert fast["jobs"] == full["jobs"]


def test_a_bad_budget_is_refused_naming_the_field() -> None:
    data = scenario_dict("budget_llama.json")
    data["budgets"][0]["thresholds"] = [50, 2000]
    with pytest.raises(ValueError, match="thresholds"):
        replay(Scenario.model_validate(data))
