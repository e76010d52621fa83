"""Replay of ``tests/scenarios/many_accounts.json`` (written by ``make_many_accounts.py``):
the tracker acts for each resource in its own account and region, and only the alarm it
put speaks for an instance.

Hand calculations (rates are the scenario's overrides):

- member-ft, M1 (trn1.32xlarge, $21.50/h, account 222222222222, eu-west-1): its
  accelerator alarm is in ALARM from 11:00, its CPU alarm from 11:10: idle from 11:10.
  One idle alert, at 11:10 (a third account's alarm under its name saying OK at 11:15 is
  not the tracker's: idleness goes on). Its checkpoint (step 100, written 11:20) is
  complete at 11:30 (10 quiet minutes); the sweep at 11:35 stops M1, in its own account
  and region, and the replay delivers the stop's own `stopping` at 11:35 (`stopped` 60 s
  later; the scenario's own 11:36 stop then changes nothing). Running 10:00-11:35 =
  5,700 s -> 21.50 x 5700 / 3600 = $34.041666667 of instance cost; idle 11:10-11:35 =
  1,500 s -> 21.50 x 1500 / 3600 = $8.958333333.
- home-train, H1 and H2 (p5.48xlarge, $55.04/h) and C1 (c5.24xlarge, $4.08/h),
  10:00-20:00: 2 x 550.40 + 40.80 = $1,141.60 of instance cost and no idle second: of
  each instance one alarm under the tracker's name is someone else's (re-created with
  another threshold or metric; or for a node the tracker makes no alarms for). None is
  stopped.
- sft-run in two accounts, ml.trn1.32xlarge at $24.72/h: the tracker account's
  16 x 36,000 billable s -> 16 x 36000 x 24.72 / 3600 = $3,955.20 (job home-sft, ended
  10:00); the member's 1 x 3,600 s -> $24.72 (job member-sft, ended 11:00), not $3,955.20
  from the other one.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from costtracker.replay import replay_session, report
from costtracker.scenario import Scenario
from shared.app import runtime
from shared.config.ledger import AutoStopConfig, LedgerConfig
from shared.domain.clock import utc
from tests.integration.conftest import scenario_dict

HOME, MEMBER, THIRD = "123456789012", "222222222222", "333333333333"
M1, H1, C1 = "i-0c1000000000000c1", "i-0c2000000000000c2", "i-0c3000000000000c3"
H2 = "i-0c4000000000000c4"
CONFIG = LedgerConfig(auto_stop=AutoStopConfig(enabled=True, dry_run=False))
NANO = Decimal("0.000000001")


def usd(value: str) -> Decimal:
    return Decimal(value).quantize(NANO)


@pytest.fixture(scope="module")
def run() -> Iterator[dict[str, Any]]:
    """The replay's document, the stops asked for, and the alarms CloudWatch holds in
    each account and region at the end."""
    scenario = Scenario.model_validate(scenario_dict("many_accounts.json"))
    with contextlib.redirect_stdout(sys.stderr), replay_session(scenario, CONFIG) as replayer:
        alarms_at: dict[tuple[str, str], list[str]] = {}
        for event in scenario.events:
            replayer.deliver(event)
            if event["id"] == "m1-ck":  # M1 still runs: its alarms are in place
                for place in ((MEMBER, "eu-west-1"), (HOME, "us-east-1"), (HOME, "eu-west-1")):
                    cloudwatch = replayer.emulator.client("cloudwatch", *place)
                    found = cloudwatch.describe_alarms()["MetricAlarms"]
                    alarms_at[place] = sorted(a["AlarmName"] for a in found)
        assert scenario.until is not None
        replayer.advance(utc(scenario.until))
        stops = runtime.current().sources.instance_stops
        yield {
            "document": report(replayer),
            "stopped": list(getattr(stops, "stopped", [])),
            "alarms_at": alarms_at,
        }


def job(run: dict[str, Any], job_id: str) -> dict[str, Any]:
    return next(j for j in run["document"]["jobs"] if j["job_id"] == job_id)


def test_member_instance_alarms_live_in_its_account_and_region(run: dict[str, Any]) -> None:
    assert run["alarms_at"][(MEMBER, "eu-west-1")] == [
        f"costtracker-{M1}-accelerator-low",
        f"costtracker-{M1}-cpu-low",
    ]
    # The tracker's account holds only its own accelerator instances' (C1 has none).
    assert run["alarms_at"][(HOME, "us-east-1")] == [
        f"costtracker-{iid}-{signal}-low" for iid in (H1, H2) for signal in ("accelerator", "cpu")
    ]
    assert run["alarms_at"][(HOME, "eu-west-1")] == []


def test_member_instance_goes_idle_for_the_hand_computed_span(run: dict[str, Any]) -> None:
    member = job(run, "member-ft")
    assert member["accounts"] == [MEMBER]
    assert member["idle_seconds"] == 1500  # 11:10-11:35, the stop's own `stopping`
    assert usd(member["cost_usd"]["instance"]) == (Decimal("21.50") * 5700 / 3600).quantize(NANO)
    assert usd(member["cost_usd"]["wasted_idle"]) == (Decimal("21.50") * 1500 / 3600).quantize(NANO)
    idle = [a for a in run["document"]["alerts"] if a["kind"] == "idle"]
    assert [(a["instance_id"], a["at"], a["job_id"]) for a in idle] == [
        (M1, "2026-11-01T11:10:00Z", "member-ft")
    ]


def test_member_instance_is_stopped_after_a_complete_checkpoint(run: dict[str, Any]) -> None:
    # Stopped once, in its own account and region (the stops fake answers only there).
    assert run["stopped"] == [M1]
    assert job(run, "member-ft")["status"] == "stopped"


def test_alarms_the_tracker_did_not_put_change_nothing(run: dict[str, Any]) -> None:
    """H1's CPU alarm re-created with another threshold, H2's accelerator alarm with
    another metric, C1's alarms (a CPU-only node); a third account's under M1's name."""
    home = job(run, "home-train")
    assert home["idle_seconds"] == 0
    assert usd(home["cost_usd"]["wasted_idle"]) == 0
    assert usd(home["cost_usd"]["instance"]) == usd("1141.60")  # 2 x 55.04 x 10 + 4.08 x 10
    assert not {H1, H2, C1} & set(run["stopped"])
    spoken = {a["instance_id"] for a in run["document"]["alerts"] if a["instance_id"]}
    assert spoken == {M1}
    assert THIRD not in {a for j in run["document"]["jobs"] for a in j["accounts"]}


def test_same_named_training_jobs_are_each_priced_from_their_own_account(
    run: dict[str, Any],
) -> None:
    home, member = job(run, "home-sft"), job(run, "member-sft")
    assert (home["accounts"], member["accounts"]) == ([HOME], [MEMBER])
    assert usd(home["cost_usd"]["instance"]) == usd("3955.20")  # 16 x 36000 x 24.72 / 3600
    assert usd(member["cost_usd"]["instance"]) == usd("24.72")  # 1 x 3600 x 24.72 / 3600
    assert member["complete"] is True
    assert not [w for w in member["warnings"] if "DescribeTrainingJob" in w["detail"]]
