"""A 1,500-cycle instance beside a 400-instance job, by replay, against a hand calculation.

- dev-box (one trn1.2xlarge at $1.34375/h): cycle n runs from T0 + 20 n minutes for
  30 + (n mod 600) seconds, billed at least 60 s: the sum over n of max(60, 30 + n mod 600)
  seconds. No volumes.
- sweep (400 g5.xlarge at $1.006/h): instance k runs from T0 + k s for 3,600 + 7 k seconds.
Every state event arrives once, in time order, but each cycle's ``stopped`` arrives before
its ``running`` for one cycle in ten (late by a minute: order by event time, not arrival).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from costtracker.replay import replay
from costtracker.scenario import Scenario
from tests.aws_events import ec2_state_event

T0 = datetime(2026, 11, 1, tzinfo=UTC)
ACCOUNT, REGION = "123456789012", "us-east-1"
DEV = "i-0d0000000000000d1"


def iso(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def state(eid: str, at: datetime, iid: str, st: str) -> dict[str, Any]:
    return ec2_state_event(eid, iid, st, iso(at))


def scenario() -> dict[str, Any]:
    events: list[dict[str, Any]] = []
    for n in range(1500):
        start = T0 + timedelta(minutes=20 * n)
        run = state(f"r{n}", start, DEV, "running")
        stop = state(f"s{n}", start + timedelta(seconds=30 + n % 600), DEV, "stopped")
        events += [stop, run] if n % 10 == 0 else [run, stop]
    sweep = [f"i-0e{k:015x}" for k in range(400)]
    for k, iid in enumerate(sweep):
        events.append(state(f"sr{k}", T0 + timedelta(seconds=k), iid, "running"))
    for k, iid in enumerate(sweep):
        events.append(state(f"ss{k}", T0 + timedelta(seconds=k + 3600 + 7 * k), iid, "stopped"))
    events.sort(key=lambda e: e["time"])  # arrival: by time, the late stops kept first above
    instances = [
        {"instance_id": DEV, "instance_type": "trn1.2xlarge", "tags": {"training-job": "dev-box"}}
    ]
    instances += [
        {"instance_id": iid, "instance_type": "g5.xlarge", "tags": {"training-job": "sweep"}}
        for iid in sweep
    ]
    return {
        "region": REGION,
        "account": ACCOUNT,
        "prices": {"ec2": {"trn1.2xlarge": "1.34375", "g5.xlarge": "1.006"}},
        "instances": instances,
        "events": events,
        "until": iso(T0 + timedelta(days=21)),
    }


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return replay(Scenario.model_validate(scenario()))


def test_the_1500_cycle_instance_matches_the_hand_calculation(document: dict[str, Any]) -> None:
    dev = next(j for j in document["jobs"] if j["job_id"] == "dev-box")
    billed = sum(max(60, 30 + n % 600) for n in range(1500))
    assert dev["instance_seconds"] == billed
    expected = Decimal(billed) * Decimal("1.34375") / 3600
    assert Decimal(dev["cost_usd"]["instance"]) == expected.quantize(Decimal("1e-9"))
    assert dev["status"] == "stopped"


def test_the_400_instance_job_matches_the_hand_calculation(document: dict[str, Any]) -> None:
    sweep = next(j for j in document["jobs"] if j["job_id"] == "sweep")
    billed = sum(3600 + 7 * k for k in range(400))
    assert sweep["instance_seconds"] == billed
    expected = Decimal(billed) * Decimal("1.006") / 3600
    assert Decimal(sweep["cost_usd"]["instance"]) == expected.quantize(Decimal("1e-9"))
    assert document["rejected_events"] == []
