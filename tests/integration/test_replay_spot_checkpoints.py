"""Spot interruption between checkpoints, restart on new instances: hand-worked values.

Scenario tests/scenarios/spot_checkpoints.json (make_spot_checkpoints.py): job gpt-spot,
p5.48xlarge spot at $20.00/h (override), S3 $0.023/GB-month, November = 2,592,000 s,
until 2026-11-01T03:00:00Z. Checkpoints: 2 shards x 10 GiB at steps 500 (00:30:00/:20),
1000 (01:00), 1500 (01:30), 2000 (02:40; one key URL-encoded); step 500 deleted 02:45.

instance: S1 00:00:00-01:52:00 (shutting-down) 6,720 s; S2 00:00:30-01:53:00 6,750 s;
  S3 02:10:00-03:00 3,000 s; S4 02:10:10-03:00 2,990 s  -> 19,460 s x 20/3600 = 108.111111111
rerun (rule 5): warning on S1 at 01:50:00; last checkpoint write before it 01:30:20;
  end of S1's segment 01:52:00 -> window 1,300 s; S1 and S2 both ran through it:
  2,600 s x 20/3600 = 14.444444444 (a portion of instance cost, not added to total)
checkpoint storage (rule 4): seconds stored 8100+8080 (deleted 02:45) + 7200+7180 + 5400+5380
  + 1200+1180 = 43,720 -> 10 GiB x 0.023 x 43,720 / 2,592,000 = 0.003879475
total = 108.111111111 + 0.003879475 = 108.114990586; checkpoints 4; interruptions 1;
status running (restarted after the warning). Spend at risk at 03:00: S3+S4 since 02:40:20,
2 x 1,180 s x 20/3600 = 13.111111111. Bad inputs: runs/notes.txt -> unmatched; deletion of
step-100 never written -> no cost; negative and missing sizes -> rejected with their ids.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from costtracker.replay import replay
from costtracker.scenario import Scenario
from tests.integration.conftest import results, scenario_dict

TOL = Decimal("1e-6")


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return replay(Scenario.model_validate(scenario_dict("spot_checkpoints.json")))


def test_costs_equal_the_hand_calculation(document: dict[str, Any]) -> None:
    (job,) = document["jobs"]
    cost = {k: Decimal(v) for k, v in job["cost_usd"].items()}
    instance = Decimal(19460) * 20 / 3600
    storage = Decimal(10) * Decimal("0.023") * 43720 / 2592000
    assert abs(cost["instance"] - instance) <= TOL
    assert abs(cost["checkpoint_storage"] - storage) <= TOL
    assert abs(cost["wasted_rerun"] - Decimal(2600) * 20 / 3600) <= TOL
    assert abs(cost["total"] - (instance + storage)) <= TOL  # waste is not added
    assert (job["checkpoints"], job["interruptions"], job["status"]) == (4, 1, "running")
    assert abs(Decimal(job["spend_at_risk_usd"]) - Decimal(2360) * 20 / 3600) <= TOL
    assert job["last_checkpoint_step"] == 2000 and job["rebalance_recommendations"] == 1


def test_bad_inputs_are_reported_not_counted(document: dict[str, Any]) -> None:
    rejected = {r["event_id"]: r["error"] for r in document["rejected_events"]}
    assert set(rejected) == {"ck-neg", "ck-nosize"}
    assert all("detail.object.size" in error for error in rejected.values())
    assert document["unmatched_objects"] == ["s3://ckpt-bucket/runs/notes.txt"]
    assert document["unrouted_events"] == ["ck-other"]  # not a checkpoint bucket


def test_shuffled_and_duplicated_delivery_gives_identical_output(
    document: dict[str, Any],
) -> None:
    shuffled = replay(Scenario.model_validate(scenario_dict("spot_checkpoints_shuffled.json")))
    assert results(shuffled) == results(document)


def test_status_is_interrupted_until_the_job_runs_again() -> None:
    data = scenario_dict("spot_checkpoints.json")
    data["until"] = "2026-11-01T02:00:00Z"
    data["events"] = [e for e in data["events"] if e["time"] <= "2026-11-01T02:00:00Z"]
    (job,) = replay(Scenario.model_validate(data))["jobs"]
    assert job["status"] == "interrupted" and job["interruptions"] == 1
