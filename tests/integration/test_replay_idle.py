"""Idle detection by replay: alert kinds and times, and idle cost by hand (cost rule 6).

Scenario tests/scenarios/idle_alarms.json (make_idle_alarms.py); until 17:00.
llama-ft: trn1.32xlarge at $21.50/h, running 10:00 -> stopped 16:00 (21,600 s = $129).
  accelerator OK 10:35 (first busy: warm-up 2,100 s = $12.541666667); CPU OK 11:00;
  accelerator ALARM 12:00 with CPU OK            -> input_bound alert at 12:00
  CPU ALARM 12:20                                -> idle alert at 12:20 (idle from 12:20)
  accelerator OK 13:10                           -> resolved at 13:10 (idle 3,000 s)
  accelerator INSUFFICIENT_DATA 14:00            -> no_metrics alert (not idle, not 0 %)
  accelerator ALARM 14:30, CPU still ALARM       -> idle alert at 14:30, until the stop at
                                                    16:00 (5,400 s)
  wasted_idle = 8,400 s x 21.50 / 3600 = 50.166666667
vit-train: p5.48xlarge at $55.04/h from 10:00, still running at 17:00 ($385.28):
  GPU ALARM 11:00, CPU ALARM 11:30 -> idle alert at 11:30, idle 11:30-17:00 = 19,800 s
  wasted_idle = 19,800 x 55.04 / 3600 = 302.72
Ignored (docs/cost-rules.md: only the tracker's own alarms speak for idleness): two alarms others
made on
llama-ft's own metrics, in ALARM at 11:05 and 11:06 while it was busy; an alarm on
NetworkIn, and an alarm for an instance EC2 does not know.
"""

from __future__ import annotations

import contextlib
import sys
from decimal import Decimal
from typing import Any

import pytest

from costtracker.replay import replay, replay_session, report
from costtracker.scenario import Scenario
from shared.domain.clock import utc
from tests.integration.conftest import results, scenario_dict

T1, P1 = "i-0e1000000000000e1", "i-0e2000000000000e2"


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return replay(Scenario.model_validate(scenario_dict("idle_alarms.json")))


def test_alerts_have_the_right_kinds_times_jobs_and_instances(document: dict[str, Any]) -> None:
    alerts = [(a["kind"], a["at"], a["job_id"], a["instance_id"]) for a in document["alerts"]]
    assert alerts == [
        ("idle", "2026-11-01T11:30:00Z", "vit-train", P1),
        ("input_bound", "2026-11-01T12:00:00Z", "llama-ft", T1),
        ("idle", "2026-11-01T12:20:00Z", "llama-ft", T1),
        ("resolved", "2026-11-01T13:10:00Z", "llama-ft", T1),
        ("no_metrics", "2026-11-01T14:00:00Z", "llama-ft", T1),
        ("idle", "2026-11-01T14:30:00Z", "llama-ft", T1),
    ]
    (resolved,) = document["resolved_alerts"]
    assert (resolved["resolves"], resolved["at"], resolved["instance_id"]) == (
        "idle",
        "2026-11-01T13:10:00Z",
        T1,
    )
    assert all(a["team"] in {"nlp", "vision"} for a in document["alerts"])
    assert all(a["audience"] == "team" and a["alert_id"] and a["body"] for a in document["alerts"])
    assert len({a["alert_id"] for a in document["alerts"]}) == len(document["alerts"])


def test_idle_cost_and_warmup_equal_the_hand_calculation(document: dict[str, Any]) -> None:
    jobs = {j["job_id"]: j for j in document["jobs"]}
    llama, vit = jobs["llama-ft"], jobs["vit-train"]
    assert Decimal(llama["cost_usd"]["instance"]) == Decimal(129)
    assert abs(
        Decimal(llama["cost_usd"]["wasted_idle"]) - Decimal(8400) * Decimal("21.50") / 3600
    ) <= Decimal("1e-6")
    assert llama["idle_seconds"] == 8400
    assert llama["warmup_seconds"] == 2100
    assert abs(Decimal(llama["warmup_usd"]) - Decimal(2100) * Decimal("21.50") / 3600) <= Decimal(
        "1e-6"
    )
    assert Decimal(vit["cost_usd"]["wasted_idle"]) == Decimal("302.72")
    assert Decimal(vit["cost_usd"]["total"]) == Decimal("385.28")  # waste is not added


def test_late_and_duplicated_events_give_the_same_document(document: dict[str, Any]) -> None:
    shuffled = replay(Scenario.model_validate(scenario_dict("idle_alarms_shuffled.json")))
    assert results(shuffled) == results(document)


def test_alarm_for_an_instance_that_starts_later_is_kept_not_dropped() -> None:
    """The GPU and CPU alarms of vit-train reach the ledger before its `running` event
    does (the alarm lifecycle saw that event and put the alarms; the ledger's delivery of
    it came late): the alarms' changes are kept and count once the run is known."""
    data = scenario_dict("idle_alarms.json")
    events = data["events"]
    running = next(e for e in events if e["id"] == "s2")
    events.remove(running)
    late = events.index(next(e for e in events if e["id"] == "a04")) + 1
    events.insert(late, running)
    scenario = Scenario.model_validate(data)
    with contextlib.redirect_stdout(sys.stderr), replay_session(scenario) as replayer:
        for event in scenario.events:
            if event["id"] == "a03":  # the first of its alarms: they were put at 10:00
                replayer.invoke("alarm_lifecycle", running)
            replayer.deliver(event)
        replayer.advance(utc(scenario.until))
        result = report(replayer)
    vit = next(j for j in result["jobs"] if j["job_id"] == "vit-train")
    assert vit["idle_seconds"] == 19800
    assert ("idle", "vit-train") in {(a["kind"], a["job_id"]) for a in result["alerts"]}
