"""The hand-calculated figures of the managed-training and capacity-block scenarios
(tests/scenarios/expected/*.json, written by hand in make_managed.py) are what the pure rules
give, fed as replay will feed them: the scenario's fakes behind the adapters' protocols at the
scenario's ``until``, and the instances' running spans from its EC2 events (shuffled and
duplicated twins included).

The replay itself does not wire these rules yet (the ledger is being rewritten); once it does,
its output for these scenarios must show the same figures.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from costtracker.fakes.scenario_aws import ScenarioCapacityReservations, ScenarioTrainingJobs
from costtracker.scenario import Scenario, load_scenario
from shared.domain.clock import FixedClock
from shared.domain.managed.models import ReservationUse
from shared.domain.managed.reservation_cost import (
    block_forecast,
    daily_utilization,
    reservation_cost,
)
from shared.domain.managed.training_cost import training_job_cost

SCENARIOS = Path(__file__).parents[1] / "scenarios"
CLOSING = {"stopping", "shutting-down", "stopped", "terminated"}


def d(text: str) -> Decimal:
    """A decimal, or a fraction "a/b" kept exact."""
    if "/" in text:
        num, den = text.split("/")
        return Decimal(num) / Decimal(den)
    return Decimal(text)


def same(a: Decimal | None, b: Decimal) -> bool:
    """Equal to 20 decimal places (a repeating fraction computed two ways differs in its
    28th digit)."""
    return a is not None and abs(a - b) < Decimal("1e-20")


def t(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def expected(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCENARIOS / "expected" / f"{name}.json").read_text())
    return data


def running_spans(events: Iterable[Any]) -> dict[str, list[tuple[datetime, datetime | None]]]:
    """EC2 running spans per instance (event time order, duplicates once): enough for these
    clean scenarios; the ledger's own rules (minimums, late events) are not redone here."""
    unique = {
        e["id"]: e
        for e in events
        if e.get("detail-type") == "EC2 Instance State-change Notification"
    }
    spans: dict[str, list[tuple[datetime, datetime | None]]] = {}
    opened: dict[str, datetime] = {}
    for event in sorted(unique.values(), key=lambda e: e["time"]):
        iid, state, at = event["detail"]["instance-id"], event["detail"]["state"], t(event["time"])
        if state == "running":
            opened.setdefault(iid, at)
        elif state in CLOSING and iid in opened:
            spans.setdefault(iid, []).append((opened.pop(iid), at))
    for iid, start in opened.items():
        spans.setdefault(iid, []).append((start, None))
    return spans


@pytest.mark.parametrize("name", ["managed_training", "managed_training_shuffled"])
def test_managed_training_figures(name: str) -> None:
    scenario = load_scenario(SCENARIOS / f"{name}.json")
    want = expected("managed_training")
    assert scenario.prices is not None and scenario.until is not None
    rate = scenario.prices.sagemaker["ml.trn1.32xlarge"]
    storage = scenario.prices.sagemaker_storage_gb_month
    clock = FixedClock(scenario.until)
    jobs = ScenarioTrainingJobs(scenario, clock)
    for job in want["jobs"]:
        described = jobs.describe(job["training_job_name"])
        cost = training_job_cost(
            described, now=clock.now(), hourly_usd=rate, storage_gb_month_usd=storage
        )
        assert cost.job_id == job["job_id"]
        assert cost.status == job["status"]
        assert cost.billed
        assert {k: v for k, v in cost.cost_usd().items()} == {
            k: d(v) for k, v in job["cost_usd"].items()
        }
        assert cost.instance_seconds == job["instance_seconds"]
        saving = job["managed_spot_saving"]
        assert cost.managed_spot_saving == (None if saving is None else d(saving))
        assert cost.complete == job["complete"]
    for moment in want["at"]:
        at = FixedClock(t(moment["time"]))
        described = ScenarioTrainingJobs(scenario, at).describe("llama-sft-spot-a")
        cost = training_job_cost(
            described, now=at.now(), hourly_usd=rate, storage_gb_month_usd=storage
        )
        assert (cost.job_id, cost.status, cost.billed) == (
            moment["job_id"],
            moment["status"],
            moment["billed"],
        )
        assert cost.cost_usd() == {k: d(v) for k, v in moment["cost_usd"].items()}
        assert cost.instance_seconds == moment["instance_seconds"]


@pytest.mark.parametrize("name", ["capacity_blocks", "capacity_blocks_shuffled"])
def test_capacity_block_and_odcr_figures(name: str) -> None:
    scenario = load_scenario(SCENARIOS / f"{name}.json")
    want = expected("capacity_blocks")
    assert scenario.prices is not None and scenario.until is not None
    now = scenario.until
    fake = ScenarioCapacityReservations(scenario, FixedClock(now))
    tags = {i.instance_id: i.tags for i in scenario.instances}
    spans = running_spans(scenario.events)
    uses: dict[str, list[ReservationUse]] = {}
    for iid, instance_spans in spans.items():
        ref = fake.instance_reservation(iid)
        assert ref is not None  # every instance of this scenario runs in a reservation
        for start, end in instance_spans:
            uses.setdefault(ref.reservation_id, []).append(
                ReservationUse(
                    instance_id=iid, job_id=tags[iid]["training-job"], start=start, end=end
                )
            )

    jobs: dict[str, dict[str, Decimal]] = {}
    seconds: dict[str, int] = {}
    fees = fake.fees_by_id()
    for want_r in want["reservations"]:
        reservation = fake.describe(want_r["reservation_id"])
        on_demand = scenario.prices.ec2.get(reservation.instance_type)
        cost = reservation_cost(
            reservation,
            uses[reservation.reservation_id],
            now,
            fee_usd=fees.get(reservation.reservation_id),
            on_demand_hourly_usd=on_demand,
        )
        assert cost.kind == want_r["kind"]
        usage = cost.usage
        assert (
            usage.reserved_instance_seconds,
            usage.used_instance_seconds,
            usage.unused_instance_seconds,
        ) == (
            want_r["reserved_instance_seconds"],
            want_r["used_instance_seconds"],
            want_r["unused_instance_seconds"],
        )
        assert usage.utilization == d(want_r["utilization"])
        assert cost.usd_per_instance_second is not None
        assert cost.usd_per_instance_second * 3600 == d(want_r["usd_per_instance_hour"])
        assert cost.wasted_job_id == want_r["wasted_job_id"]
        assert cost.wasted_reserved_usd == d(want_r["wasted_reserved_usd"])
        for day, fraction in want_r["daily_utilization"].items():
            assert same(
                daily_utilization(
                    reservation,
                    uses[reservation.reservation_id],
                    datetime.fromisoformat(day).date(),
                ),
                d(fraction),
            )
        # Into job figures: a block's share replaces the instance rate; an ODCR's instances
        # bill at the on-demand rate (rule 1; no segment here is under the 60 s minimum).
        for charge in cost.by_job:
            instance = charge.instance_usd
            if instance is None:
                assert on_demand is not None
                instance = Decimal(charge.instance_seconds) * on_demand / 3600
            job = jobs.setdefault(charge.job_id, {"instance": Decimal(0)})
            job["instance"] += instance
            seconds[charge.job_id] = seconds.get(charge.job_id, 0) + charge.instance_seconds
        assert cost.wasted_reserved_usd is not None
        job = jobs.setdefault(cost.wasted_job_id, {"instance": Decimal(0)})
        job["wasted_reserved"] = job.get("wasted_reserved", Decimal(0)) + cost.wasted_reserved_usd
        seconds.setdefault(cost.wasted_job_id, 0)

    assert sorted(jobs) == sorted(j["job_id"] for j in want["jobs"])
    for want_job in want["jobs"]:
        got = jobs[want_job["job_id"]]
        got["total"] = sum(got.values(), Decimal(0))
        assert got == {k: d(v) for k, v in want_job["cost_usd"].items()}, want_job["job_id"]
        assert seconds[want_job["job_id"]] == want_job["instance_seconds"]

    block_uses = uses["cr-0b1c000000000000b"]
    for want_f in want["forecasts"]:
        reservation = fake.describe(want_f["reservation_id"])
        forecast = block_forecast(reservation, block_uses, t(want_f["at"]))
        assert forecast is not None
        assert forecast.running_now == want_f["running_now"]
        assert same(
            forecast.unused_fraction_at_current_pace, d(want_f["unused_fraction_at_current_pace"])
        )
        assert same(
            forecast.unused_fraction_at_average_pace, d(want_f["unused_fraction_at_average_pace"])
        )
        assert forecast.message() == want_f["message"]


def test_the_fees_add_up() -> None:
    """The block's job costs and its wasted_reserved add up to its fee exactly."""
    want = expected("capacity_blocks")
    block_jobs = ("p5-pretrain", "p5-eval", "reservation:cr-0b1c000000000000b")
    total = sum(d(j["cost_usd"]["total"]) for j in want["jobs"] if j["job_id"] in block_jobs)
    assert total == Decimal(6000)


# -- the scenario keys' validation -----------------------------------------------------------


def _job(**update: Any) -> dict[str, Any]:
    return {
        "name": "j-1",
        "instance_type": "ml.trn1.32xlarge",
        "instance_count": 2,
        "volume_gb": 100,
        "training_seconds": 3600,
        "billable_seconds": 1800,
        "spot": True,
        **update,
    }


def _reservation(**update: Any) -> dict[str, Any]:
    return {
        "reservation_id": "cr-0b1c000000000000b",
        "kind": "capacity-block",
        "instance_type": "p5.48xlarge",
        "instance_count": 4,
        "start": "2026-11-10T11:30:00Z",
        "end": "2026-11-12T11:30:00Z",
        "upfront_fee_usd": "6000",
        **update,
    }


@pytest.mark.parametrize(
    ("key", "entry", "message"),
    [
        ("training_jobs", _job(instance_type="trn1.32xlarge"), "instance_type"),
        ("training_jobs", _job(instance_count=0), "instance_count"),
        ("training_jobs", _job(billable_seconds=4000), "exceed training_seconds"),
        ("training_jobs", _job(billable_seconds=None), "a spot job needs billable_seconds"),
        ("training_jobs", _job(name="bad_name"), "name"),
        ("training_jobs", _job(volume="100"), "Extra inputs are not permitted"),
        ("capacity_reservations", _reservation(kind="savings-plan"), "kind"),
        ("capacity_reservations", _reservation(end=None), "a capacity-block needs an end"),
        (
            "capacity_reservations",
            _reservation(end="2026-11-10T11:30:00Z"),
            "end must be after start",
        ),
        ("capacity_reservations", _reservation(end="2027-06-10T11:30:00Z"), "182 days at most"),
        ("capacity_reservations", _reservation(upfront_fee_usd="-1"), "upfront_fee_usd"),
        (
            "capacity_reservations",
            _reservation(kind="odcr"),
            "upfront_fee_usd is for a capacity-block",
        ),
        ("capacity_reservations", _reservation(start="2026-11-10T11:30:00"), "timezone"),
        ("capacity_reservations", _reservation(reservation_id="r-1"), "reservation_id"),
    ],
)
def test_bad_managed_entries_are_clear_errors(
    key: str, entry: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        Scenario.model_validate({key: [entry]})


def test_duplicates_and_capacity_block_instances_are_checked() -> None:
    with pytest.raises(ValidationError, match="repeated: j-1"):
        Scenario.model_validate({"training_jobs": [_job(), _job()]})
    with pytest.raises(ValidationError, match="repeated: cr-0b1c000000000000b"):
        Scenario.model_validate({"capacity_reservations": [_reservation(), _reservation()]})
    with pytest.raises(ValidationError, match="needs capacity_reservation_id"):
        Scenario.model_validate(
            {
                "instances": [
                    {
                        "instance_id": "i-0a000000000000001",
                        "instance_type": "p5.48xlarge",
                        "lifecycle": "capacity-block",
                    }
                ]
            }
        )


def test_defaults_of_a_training_job_entry() -> None:
    scenario = Scenario.model_validate(
        {
            "training_jobs": [
                {
                    "name": "j-2",
                    "instance_type": "ml.g5.xlarge",
                    "instance_count": 1,
                    "training_seconds": 600,
                }
            ]
        }
    )
    (job,) = scenario.training_jobs
    assert (job.billed_seconds, job.warm_pool_seconds, job.spot, job.volume_gb) == (
        600,
        0,
        False,
        0,
    )
    odcr = Scenario.model_validate(
        {"capacity_reservations": [_reservation(kind="odcr", end=None, upfront_fee_usd=None)]}
    )
    assert odcr.capacity_reservations[0].end is None
