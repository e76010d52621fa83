"""Accelerator-hours and utilization by team, and accelerators idle now, from a replayed
ledger (tests/scenarios/idle_alarms.json; its hand calculation is in test_replay_idle.py):

nlp (llama-ft, trn1.32xlarge) ran 10:00 -> 16:00 = 6 h, idle 12:20-13:10 and 14:30-16:00
  = 8,400 s = 2.333... h -> utilization (6 - 2.333...) / 6 = 61.11...%
vision (vit-train, p5.48xlarge) ran 10:00 -> 17:00 (until) = 7 h, idle 11:30-17:00
  = 5.5 h -> utilization 1.5 / 7 = 21.43...%; still idle at 17:00.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from costtracker.replay import replay_session
from costtracker.scenario import Scenario
from shared import runtime
from shared.services.ops_metrics import accelerators_by_condition, day_figures
from tests.integration.conftest import scenario_dict


def test_day_figures_and_idle_now_equal_the_hand_calculation() -> None:
    scenario = Scenario.model_validate(scenario_dict("idle_alarms.json"))
    with replay_session(scenario) as replayer:
        replayer.run()
        now = replayer.clock.now()
        deps = runtime.ledger_deps()
        figures = day_figures(deps, date(2026, 11, 1), now)
        conditions = accelerators_by_condition(deps.instances.open_heads())
    assert set(figures.teams) == {"nlp", "vision"}
    nlp, vision = figures.teams["nlp"], figures.teams["vision"]
    assert nlp.accelerator_hours == 6
    assert nlp.idle_hours == Decimal(8400) / 3600
    assert nlp.utilization_percent is not None
    assert abs(nlp.utilization_percent - Decimal("61.111111")) < Decimal("1e-6")
    assert (vision.accelerator_hours, vision.idle_hours) == (7, Decimal("5.5"))
    assert vision.utilization_percent is not None
    assert abs(vision.utilization_percent - Decimal("1.5") * 100 / 7) < Decimal("1e-9")
    assert figures.checkpoint_storage_gb == 0
    assert conditions == {"idle": 1, "input_bound": 0, "no_metrics": 0, "other": 0}
