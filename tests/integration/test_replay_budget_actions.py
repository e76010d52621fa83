"""Budget actions by replay, each against a hand calculation (scenarios:
``tests/scenarios/budget_actions/``, written by ``tests/scenarios/make_budget_actions.py``).

One trn1.32xlarge at $21.50/h from 00:00 (opted in to stops), a $100 total budget:
$100 is reached at 100 / 21.50 h = 16,744.186 s = 04:39:04.186. The forecast predicted
that crossing earlier, so its timer fires at the crossing rounded up to the second,
04:39:05: the budget alert, and the action, are at 04:39:05.
"""

from __future__ import annotations

import contextlib
import json
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from costtracker.replay import replay
from costtracker.scenario import Scenario

SCENARIOS = Path(__file__).parent.parent / "scenarios" / "budget_actions"
A = "i-0a1b2c3d4e5f60001"
JOB = "llama-sft"

RATE = Decimal("21.50")
CROSSING = "2026-11-01T04:39:05Z"


def run(name: str) -> dict[str, Any]:
    scenario = Scenario.model_validate(json.loads((SCENARIOS / f"{name}.json").read_text()))
    with contextlib.redirect_stdout(sys.stderr):
        return replay(scenario)


def cost(seconds: int, rate: Decimal = RATE) -> Decimal:
    return (rate * seconds / 3600).quantize(Decimal("0.000000001"))


def job(document: dict[str, Any], job_id: str) -> dict[str, Any]:
    return next(j for j in document["jobs"] if j["job_id"] == job_id)


def only_action(document: dict[str, Any]) -> dict[str, Any]:
    (action,) = document["actions"]
    return action


@pytest.fixture(scope="module")
def checkpoint() -> dict[str, Any]:
    return run("checkpoint_after_crossing")


def test_a_stop_after_checkpoint_waits_for_the_checkpoint_and_cost_ends_there(
    checkpoint: dict[str, Any],
) -> None:
    """The step's _COMPLETE marker lands at 04:59:05 and wakes the waiting stop then (a
    timer at the checkpoint's moment, not the next minute's evaluation): stopping at
    04:59:05, stopped 60 s later at 05:00:05, so 55 s less than stopping at 05:00:00
    (stopped 05:01:00, 18,000 s): 17,945 s billed, 17,945 x $21.50 / 3,600 =
    $107.171527..., no rerun waste (nothing after the checkpoint is lost)."""
    action = only_action(checkpoint)
    assert action["action_id"] == "llama-cap:total:100:stop_after_checkpoint"
    assert (action["fired_at"], action["acted_at"]) == (CROSSING, "2026-11-01T04:59:05Z")
    assert action["instance_ids"] == [A] and action["training_jobs"] == []
    assert (action["dry_run"], action["state"]) == (False, "done")
    sft = job(checkpoint, JOB)
    assert sft["status"] == "stopped" and sft["instance_seconds"] == 17_945
    assert Decimal(sft["cost_usd"]["total"]) == cost(17_945)
    assert cost(17_945).quantize(Decimal("0.000001")) == Decimal("107.171528")
    assert Decimal(sft["cost_usd"]["wasted_rerun"]) == 0
    assert not checkpoint["rejected_events"]


def test_the_action_and_the_budget_alert_come_at_the_crossing_to_team_and_finance(
    checkpoint: dict[str, Any],
) -> None:
    (budget,) = [a for a in checkpoint["alerts"] if a["kind"] == "budget"]
    assert budget["at"] == CROSSING
    fired = [a for a in checkpoint["alerts"] if a["kind"] == "action" and a["at"] == CROSSING]
    assert sorted(a["audience"] for a in fired) == ["finance", "team"]
    for alert in fired:
        assert alert["action_id"] == "llama-cap:total:100:stop_after_checkpoint"
        assert alert["alert_id"].startswith("action:llama-cap:total:100:stop_after_checkpoint:")
    done = [a for a in checkpoint["alerts"] if a["kind"] == "action" and a["state"] == "done"]
    assert {a["at"] for a in done} == {"2026-11-01T04:59:05Z"}


def test_with_grace_and_no_checkpoint_it_stops_when_the_grace_ends() -> None:
    """grace_minutes 30: stopped at 04:39:05 + 30 min = 05:09:05 (a timer at that moment):
    18,545 s billed, $110.754861111."""
    document = run("grace_without_checkpoint")
    action = only_action(document)
    assert (action["fired_at"], action["acted_at"]) == (CROSSING, "2026-11-01T05:09:05Z")
    sft = job(document, JOB)
    assert sft["instance_seconds"] == 18_545
    assert Decimal(sft["cost_usd"]["total"]) == cost(18_545)


def test_the_default_is_a_dry_run_that_says_what_it_would_have_done() -> None:
    """stop_now without dry_run: announced, nothing stopped; the instance runs to its own
    stop at 06:00: 21,600 s, $129.00."""
    document = run("default_dry_run")
    action = only_action(document)
    assert (action["dry_run"], action["state"], action["acted_at"]) == (True, "announced", None)
    assert action["instance_ids"] == [A]
    assert action["targets"] == [{"id": A, "kind": "instance", "result": "would_stop", "at": None}]
    assert action["detail"] == f"would stop now: {A}"
    assert Decimal(job(document, JOB)["cost_usd"]["total"]) == Decimal("129")
    subjects = [a["subject"] for a in document["alerts"] if a["kind"] == "action"]
    assert subjects and all("(dry run)" in s for s in subjects)


def test_an_instance_without_the_opt_in_tag_is_never_stopped() -> None:
    """Both $21.50/h from 00:00: $100 at 100 / 43 h = 8,372.093 s -> 02:19:33. stop_now
    stops A then (8,373 s, $50.005416667); B, not opted in, runs to 04:00 ($86.00)."""
    document = run("opted_out_instance")
    action = only_action(document)
    assert (action["fired_at"], action["acted_at"]) == ("2026-11-01T02:19:33Z",) * 2
    assert action["instance_ids"] == [A]
    assert Decimal(job(document, JOB)["cost_usd"]["total"]) == cost(8_373)
    assert Decimal(job(document, "llama-eval")["cost_usd"]["total"]) == Decimal("86")
    assert job(document, "llama-eval")["instance_seconds"] == 14_400


def test_a_sagemaker_job_without_tracked_checkpoints_is_stopped_at_the_crossing() -> None:
    """$25/h from 00:00: $100 at 04:00:00. Stopping then, Stopped 120 s later; SageMaker
    bills to 04:02:00: 14,520 s, $100.833333333."""
    document = run("sagemaker_job")
    action = only_action(document)
    assert action["training_jobs"] == ["llama-sm"] and action["instance_ids"] == []
    assert (action["fired_at"], action["acted_at"]) == ("2026-11-01T04:00:00Z",) * 2
    sm = job(document, "llama-sm")
    assert sm["status"] == "stopped" and sm["instance_seconds"] == 14_520
    assert Decimal(sm["cost_usd"]["total"]) == cost(14_520, Decimal(25))


def test_a_release_before_the_checkpoint_stops_nothing_and_a_team_member_cannot() -> None:
    """A team member's release at 04:44 is refused (403); finance's at 04:45 releases the
    waiting action: the 04:59 checkpoint stops nothing, the instance runs to 06:00 ($129)."""
    document = run("release_before_checkpoint")
    team, finance = document["api_calls"]
    assert (team["as"], team["status"]) == ("team:nlp", 403)
    assert (finance["as"], finance["status"]) == ("finance", 200)
    assert finance["body"]["state"] == "released"
    assert finance["body"]["cancelled"] == [A]
    action = only_action(document)
    assert (action["state"], action["acted_at"]) == ("released", None)
    assert Decimal(job(document, JOB)["cost_usd"]["total"]) == Decimal("129")
    released = [a for a in document["alerts"] if a["kind"] == "action" and a["state"] == "released"]
    assert sorted(a["audience"] for a in released) == ["finance", "team"]


def test_a_per_owner_day_cap_carries_the_same_actions() -> None:
    """owner=alice, $100 a day: stopped at 04:39:05 (16,745 s, $100.005763889); the
    action's id names the day."""
    document = run("owner_day_cap")
    action = only_action(document)
    assert action["action_id"] == "alice-day:2026-11-01:100:stop_now"
    assert (action["fired_at"], action["acted_at"]) == (CROSSING, CROSSING)
    assert Decimal(job(document, JOB)["cost_usd"]["total"]) == cost(16_745)


def test_a_timer_whose_crossing_no_longer_comes_does_nothing() -> None:
    document = run("forecast_moves_later")
    assert [a for a in document["alerts"] if a["kind"] == "budget"] == []
    assert Decimal(job(document, JOB)["cost_usd"]["total"]) == cost(16_500)
    assert document["actions"] == [] and not document["rejected_events"]


def test_a_timer_is_replanned_when_the_crossing_moves_and_the_crossing_alerts_once() -> None:
    document = run("forecast_moves_earlier")
    (alert,) = [a for a in document["alerts"] if a["kind"] == "budget"]
    assert alert["at"] == "2026-11-01T04:34:33Z"
