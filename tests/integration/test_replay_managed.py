"""Replay of the managed-training and capacity-block scenarios (and their shuffled, duplicated
twins) equals the hand calculation in tests/scenarios/make_managed.py, whose figures are in
tests/scenarios/expected/*.json: through the real handlers, the ledger, its rollups and the
job view, with DescribeTrainingJob / DescribeCapacityReservations answered by the
scenario's fakes behind the same interfaces."""

from __future__ import annotations

import json
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from costtracker.replay import replay
from costtracker.scenario import Scenario
from tests.integration.conftest import scenario_dict

EXPECTED = Path(__file__).parents[1] / "scenarios" / "expected"


def d(text: str) -> Decimal:
    if "/" in text:
        num, den = text.split("/")
        return Decimal(num) / Decimal(den)
    return Decimal(text)


def close(got: str | None, want: str) -> bool:
    """Equal to the 9 decimals the document shows."""
    return got is not None and abs(Decimal(got) - d(want)) < Decimal("1e-9")


@cache
def run(name: str) -> dict[str, Any]:
    return replay(Scenario.model_validate(scenario_dict(f"{name}.json")))


def expected(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EXPECTED / f"{name}.json").read_text())
    return data


@pytest.mark.parametrize("name", ["managed_training", "managed_training_shuffled"])
def test_sagemaker_jobs_equal_the_hand_calculation(name: str) -> None:
    document = run(name)
    assert document["rejected_events"] == [] and document["unrouted_events"] == []
    jobs = {j["job_id"]: j for j in document["jobs"]}
    want_jobs = expected("managed_training")["jobs"]
    assert set(jobs) == {j["job_id"] for j in want_jobs}
    for want in want_jobs:
        got = jobs[want["job_id"]]
        assert got["status"] == want["status"]
        assert got["training_job_name"] == want["training_job_name"]
        for key, value in want["cost_usd"].items():
            assert close(got["cost_usd"][key], value), (want["job_id"], key, got["cost_usd"])
        assert got["instance_seconds"] == want["instance_seconds"]
        saving = want["managed_spot_saving"]
        if saving is None:
            assert got["managed_spot_saving"] is None
        else:
            assert close(got["managed_spot_saving"], saving)
        assert got["complete"] is want["complete"]
        assert got["price_sources"], "the rate's provenance is shown"
    # Every day's summary adds up to the jobs' totals (a day split of the same figures).
    days = sum(Decimal(s["total_usd"]) for s in document["daily_summaries"])
    assert days == sum(Decimal(j["cost_usd"]["total"]) for j in document["jobs"])


@pytest.mark.parametrize("name", ["capacity_blocks", "capacity_blocks_shuffled"])
def test_capacity_block_and_odcr_equal_the_hand_calculation(name: str) -> None:
    document = run(name)
    assert document["rejected_events"] == [] and document["unrouted_events"] == []
    want = expected("capacity_blocks")
    jobs = {j["job_id"]: j for j in document["jobs"]}
    assert set(jobs) == {j["job_id"] for j in want["jobs"]}
    for job in want["jobs"]:
        got = jobs[job["job_id"]]
        assert got["status"] == job["status"], job["job_id"]
        for key, value in job["cost_usd"].items():
            assert close(got["cost_usd"][key], value), (job["job_id"], key, got["cost_usd"])
        assert got["instance_seconds"] == job["instance_seconds"]
        assert got["complete"] is job["complete"]
    shown = {r["reservation_id"]: r for j in document["jobs"] for r in j.get("reservations", [])}
    for res in want["reservations"]:
        got = shown[res["reservation_id"]]
        assert (
            jobs[res["wasted_job_id"]]["reservations"][0]["reservation_id"] == got["reservation_id"]
        )
        for key in (
            "reserved_instance_seconds",
            "used_instance_seconds",
            "unused_instance_seconds",
        ):
            assert got[key] == res[key]
        for key in ("utilization", "usd_per_instance_hour", "wasted_reserved_usd"):
            assert close(got[key], res[key]), (res["reservation_id"], key)
    block = shown["cr-0b1c000000000000b"]
    assert any(n.startswith("delivered") for n in block["notes"])
    assert any(n.startswith("expiration_warning") for n in block["notes"])
    # The fee, exactly: the jobs' shares and the unused time add up to $6,000.
    fee = sum(
        Decimal(jobs[j]["cost_usd"]["total"])
        for j in ("p5-pretrain", "p5-eval", "reservation:cr-0b1c000000000000b")
    )
    assert fee == Decimal(6000)
    days = sum(Decimal(s["total_usd"]) for s in document["daily_summaries"])
    assert days == sum(Decimal(j["cost_usd"]["total"]) for j in document["jobs"])
    assert document["admin_alerts"] == []  # no day below the default 20 %


def test_an_underused_reservation_alerts_admins_once_per_day() -> None:
    raw = scenario_dict("capacity_blocks.json")
    # Only the first job's first 18 h run: 11-11 keeps 24 of 96 instance-hours used (25 %,
    # not below 20 %), 11-12 none of its 46.
    raw["events"] = [e for e in raw["events"] if not str(e["id"]).startswith(("x2-", "y-"))]
    document = replay(Scenario.model_validate(raw), base_config=None)
    underused = [a for a in document["alerts"] if a["kind"] == "reservation_underused"]
    days = sorted(a["alert_id"] for a in underused)
    assert days == ["reservation_underused:123456789012:cr-0b1c000000000000b:2026-11-12"]
    assert {a["audience"] for a in underused} == {"admin"}
    assert all("reservation:cr-0b1c000000000000b" in a["body"] for a in underused)
