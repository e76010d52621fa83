"""Budget alerts by replay, against crossings worked out by hand.

Scenario tests/scenarios/budget_llama.json (make_budget.py): budget llama-total, scope
project=llama, $1,000 total, thresholds 50/80/100. llama-sft: trn1.32xlarge at $21.50/h
from 00:00; llama-dpo: p5.48xlarge at $55.04/h from 02:00; both stop at 16:00.
Spend at t hours (t >= 2): 21.50 t + 55.04 (t - 2) = 76.54 t - 110.08.
  50 %:  t = 610.08 / 76.54 = 7.970747 h -> 07:58:14.7; alert within 2 min after
  80 %:  t = 910.08 / 76.54 = 11.890253 h -> 11:53:24.9
  100 %: t = 1110.08 / 76.54 = 14.503528 h -> 14:30:12.7
Forecast: no declared durations, so a 24 h horizon: at 00:0x only llama-sft runs
(spend + 24 x 21.50 = ~$516 < $1,000); once llama-dpo runs (02:00) the projection is
~$1,881 > $1,000 -> one forecast alert, before the 100 % crossing.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
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


def test_three_budget_alerts_each_within_two_minutes_after_the_crossing(
    document: dict[str, Any],
) -> None:
    budget = [a for a in document["alerts"] if a["kind"] == "budget"]
    assert [a["threshold"] for a in budget] == [50, 80, 100]
    for alert in budget:
        delay = at(alert) - CROSSINGS[alert["threshold"]]
        assert timedelta(0) <= delay <= timedelta(minutes=2), (alert, delay)
        assert alert["budget_id"] == "llama-total"
    assert budget[1]["subject"].startswith("Budget llama-total at 80 %: $8")
    assert budget[1]["subject"].endswith(" of $1,000.00")


def test_one_forecast_before_the_100_percent_crossing(document: dict[str, Any]) -> None:
    (forecast,) = [a for a in document["alerts"] if a["kind"] == "forecast"]
    assert DAY + timedelta(hours=2) <= at(forecast) < CROSSINGS[100]
    assert forecast["projected_crossing_at"].startswith("2026-11-01T14:30")


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
