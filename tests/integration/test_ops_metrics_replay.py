"""Accelerator-hours and utilization by team, and accelerators idle now, from a replayed
ledger (tests/scenarios/idle_alarms.json; its hand calculation is in test_replay_idle.py):

nlp (llama-ft, trn1.32xlarge) ran 10:00 -> 16:00 = 6 h, idle 12:20-13:10 and 14:30-16:00
  = 8,400 s = 2.333... h -> utilization (6 - 2.333...) / 6 = 61.11...%
vision (vit-train, p5.48xlarge) ran 10:00 -> 17:00 (until) = 7 h, idle 11:30-17:00
  = 5.5 h -> utilization 1.5 / 7 = 21.43...%; still idle at 17:00.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest

from costtracker.replay import replay_session
from costtracker.scenario import Scenario
from shared.app import runtime
from shared.app.functions import SCHEDULES
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


def test_the_scheduled_functions_emit_them_when_metrics_are_on(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = Scenario.model_validate(scenario_dict("idle_alarms.json"))
    with replay_session(scenario) as replayer:
        replayer.run()
        capsys.readouterr()
        monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
        at = datetime(2026, 11, 2, 0, 30, tzinfo=UTC)  # the day after: Nov 1 is whole
        replayer.clock.advance_to(at)
        for schedule in SCHEDULES:
            if schedule.function in ("ledger_sweep", "daily_summary"):
                replayer.invoke(schedule.function, replayer.scheduled_event(schedule, at))
        assert replayer.rejected == []
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if "_aws" in line]
    names = {
        m["Name"] for line in lines for d in line["_aws"]["CloudWatchMetrics"] for m in d["Metrics"]
    }
    assert {"IdleAccelerators", "AcceleratorHours", "AcceleratorUtilization"} <= names
    hours = {line["team"]: line["AcceleratorHours"] for line in lines if "AcceleratorHours" in line}
    # At 00:30 on Nov 2 the summary covers all of Nov 1: vit-train (still running) 10:00 to
    # midnight = 14 h; llama-ft 6 h.
    assert hours == {"nlp": [6.0], "vision": [14.0]}


def _summary_reads(replayer: object, monkeypatch: pytest.MonkeyPatch, metrics_on: bool) -> int:
    """Ledger reads (Query, GetItem, BatchGetItem) of one daily summary run, for the day
    before the replay's clock."""
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false" if metrics_on else "true")
    table = runtime.ledger_deps().table
    reads = []
    for name in ("query", "get", "batch_get"):
        method = getattr(table, name)

        def counted(*args: object, _method: object = method, **kwargs: object) -> object:
            reads.append(args)
            return _method(*args, **kwargs)  # type: ignore[operator]

        monkeypatch.setattr(table, name, counted)
    at = replayer.clock.now()  # type: ignore[attr-defined]
    (schedule,) = [s for s in SCHEDULES if s.function == "daily_summary"]
    replayer.invoke("daily_summary", replayer.scheduled_event(schedule, at))  # type: ignore[attr-defined]
    for name in ("query", "get", "batch_get"):
        monkeypatch.delattr(table, name)
    return len(reads)


def test_the_days_figures_come_from_the_summarys_own_walk(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Metrics on: the operations figures are added up while the summary walks the day,
    so the run reads what it reads with metrics off, and the figures are the same as a
    walk of their own."""
    from shared.services.ops_metrics import DayFiguresWalk
    from shared.services.summaries import summarize_day

    scenario = Scenario.model_validate(scenario_dict("idle_alarms.json"))
    with replay_session(scenario) as replayer:
        replayer.run()
        replayer.clock.advance_to(datetime(2026, 11, 2, 0, 30, tzinfo=UTC))
        off = _summary_reads(replayer, monkeypatch, metrics_on=False)
        on = _summary_reads(replayer, monkeypatch, metrics_on=True)
        deps = runtime.ledger_deps()
        now = replayer.clock.now()
        walk = DayFiguresWalk(deps, date(2026, 11, 1), now)
        summarize_day(deps, date(2026, 11, 1), now, each_job=walk.add)
        alone = day_figures(deps, date(2026, 11, 1), now)
        assert replayer.rejected == []
    capsys.readouterr()
    assert off > 0 and on == off
    assert walk.figures() == alone
    assert {t: f.accelerator_hours for t, f in alone.teams.items()} == {"nlp": 6, "vision": 14}
