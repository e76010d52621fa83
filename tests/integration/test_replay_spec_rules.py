"""cost rules that round 1 got wrong, by replay, each against a hand calculation.

Scenario (us-east-1, 2026-11-01, until 2026-11-02 00:00; November has 30 days, so 12 h
is 1/60 of a month). Prices: trn1.32xlarge $21.50/h with a 30 % discount on ``trn1``
(effective $15.05/h), p5.48xlarge $55.04/h; EBS $/GB-month gp3 0.08, io2 0.125, io1 0.125;
$/IOPS-month io2 0.065, io1 0.065, gp3 0.005; gp3 throughput $0.04 per MB/s-month; S3 0.023.

- ebs-job: trn1.32xlarge, running 00:00 -> terminated 12:00 (12 h):
  instance 12 x 15.05 = 180.60 (list 12 x 21.50 = 258); volumes over 1/60 month:
  io2 500 GiB, 4,000 IOPS: 500 x 0.125 + 4,000 x 0.065 = 322.50 /month;
  gp3 1,000 GiB, 6,000 IOPS, 250 MB/s: 80 + 3,000 x 0.005 + 125 x 0.04 = 100 /month;
  io1 100 GiB with no IOPS figure: 12.50 /month, its IOPS part unconfirmed;
  st1 2,000 GiB with no price: unpriced (never 0, never a crash).
  EBS = (322.50 + 100 + 12.50) / 60 = 7.25; the job is not complete (st1 unpriced).
- zombie: trn1.32xlarge, running 01:00 -> terminated 02:00, then a stray running at 03:00
  and stopped at 04:00: terminated is final; 1 h = 15.05, two event_after_terminated.
- orphan-ckpt: a 10 GiB checkpoint written at 00:00 under a job no instance carries:
  a job with storage cost only: 10 x 0.023 / 30 = 0.007666...
- idle-job: p5.48xlarge running 00:00; its accelerator alarm ALARM 01:00, CPU alarm ALARM
  01:30 (idle from 01:30); stopped 02:00; running 03:00 -> stopped 05:00 with no alarm
  event after the restart: idle ends at the stop. Idle 0.5 h x 55.04 = 27.52; instance
  4 h x 55.04 = 220.16.
- untagged:i-0a0000000000000a4: trn2.48xlarge (no price) 00:00 -> 01:00: 3,600 s kept,
  unpriced, incomplete; the day's summary says so.
- an event timed after ``until`` is ignored and listed in the top-level warnings.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from costtracker.replay import replay
from costtracker.scenario import Scenario
from tests.aws_events import TRACKER_METRICS, alarm_state_event, ec2_state_event, s3_object_event

ACCOUNT, REGION = "123456789012", "us-east-1"


def state(eid: str, at: str, iid: str, st: str) -> dict[str, Any]:
    return ec2_state_event(
        eid, iid, st, at, resources=[f"arn:aws:ec2:{REGION}:{ACCOUNT}:instance/{iid}"]
    )


def alarm(eid: str, at: str, iid: str, signal: str, value: str) -> dict[str, Any]:
    """One of the tracker's own alarms of a GPU instance (its metric, period, statistic)."""
    metric = TRACKER_METRICS["gpu" if signal == "accelerator" else "cpu"]
    name = f"costtracker-{iid}-{signal}-low"
    return alarm_state_event(eid, name, value, at, metric=metric, instance_id=iid)


def created(eid: str, at: str, key: str, size: int) -> dict[str, Any]:
    return s3_object_event(eid, "ckpt-bucket", key, at, size=size, sequencer="0A")


EBS, ZOMBIE, IDLE, NEW = (
    "i-0a0000000000000a1",
    "i-0a0000000000000a2",
    "i-0a0000000000000a3",
    "i-0a0000000000000a4",
)
SCENARIO = {
    "region": REGION,
    "account": ACCOUNT,
    "prices": {
        "ec2": {"trn1.32xlarge": "21.50", "p5.48xlarge": "55.04"},
        "ebs_gb_month": {"gp3": "0.08", "io2": "0.125", "io1": "0.125"},
        "ebs_iops_month": {"io2": "0.065", "io1": "0.065", "gp3": "0.005"},
        "ebs_throughput_month": {"gp3": "0.04"},
        "s3_gb_month": "0.023",
    },
    "discounts": {"trn1": "0.30"},
    "checkpoint": {
        "buckets": ["ckpt-bucket"],
        "key_pattern": "^runs/(?P<job>[^/]+)/step-(?P<step>\\d+)/",
    },
    "instances": [
        {
            "instance_id": EBS,
            "instance_type": "trn1.32xlarge",
            "tags": {"training-job": "ebs-job", "team": "nlp"},
            "volumes": [
                {"size_gib": 500, "volume_type": "io2", "iops": 4000},
                {"size_gib": 1000, "volume_type": "gp3", "iops": 6000, "throughput": 250},
                {"size_gib": 100, "volume_type": "io1"},
                {"size_gib": 2000, "volume_type": "st1"},
            ],
        },
        {
            "instance_id": ZOMBIE,
            "instance_type": "trn1.32xlarge",
            "tags": {"training-job": "zombie"},
        },
        {
            "instance_id": IDLE,
            "instance_type": "p5.48xlarge",
            "tags": {"training-job": "idle-job", "team": "vision"},
        },
        {"instance_id": NEW, "instance_type": "trn2.48xlarge"},
    ],
    "events": [
        state("e1", "2026-11-01T00:00:00Z", EBS, "running"),
        created("c1", "2026-11-01T00:00:00Z", "runs/orphan-ckpt/step-100/model.pt", 10 * 2**30),
        state("i1", "2026-11-01T00:00:00Z", IDLE, "running"),
        state("n1", "2026-11-01T00:00:00Z", NEW, "running"),
        state("z1", "2026-11-01T01:00:00Z", ZOMBIE, "running"),
        alarm("a1", "2026-11-01T01:00:00Z", IDLE, "accelerator", "ALARM"),
        state("n2", "2026-11-01T01:00:00Z", NEW, "stopped"),
        alarm("a2", "2026-11-01T01:30:00Z", IDLE, "cpu", "ALARM"),
        state("z2", "2026-11-01T02:00:00Z", ZOMBIE, "terminated"),
        state("i2", "2026-11-01T02:00:00Z", IDLE, "stopped"),
        state("z3", "2026-11-01T03:00:00Z", ZOMBIE, "running"),
        state("i3", "2026-11-01T03:00:00Z", IDLE, "running"),
        state("z4", "2026-11-01T04:00:00Z", ZOMBIE, "stopped"),
        state("i4", "2026-11-01T05:00:00Z", IDLE, "stopped"),
        state("e2", "2026-11-01T12:00:00Z", EBS, "terminated"),
        state("late", "2026-11-03T00:00:00Z", ZOMBIE, "running"),
    ],
    "until": "2026-11-02T00:00:00Z",
}


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return replay(Scenario.model_validate(SCENARIO))


def job(document: dict[str, Any], job_id: str) -> dict[str, Any]:
    return next(j for j in document["jobs"] if j["job_id"] == job_id)


def test_any_volume_type_and_provisioned_performance(document: dict[str, Any]) -> None:
    ebs = job(document, "ebs-job")
    assert Decimal(ebs["cost_usd"]["instance"]) == Decimal("180.60")
    assert Decimal(ebs["list_cost_usd"]["instance"]) == Decimal("258")
    assert Decimal(ebs["cost_usd"]["ebs"]) == Decimal("7.25")
    assert ebs["complete"] is False
    assert "unpriced:ebs:st1:us-east-1" in ebs["unconfirmed"]
    assert "ebs_iops:io1:us-east-1" in ebs["unconfirmed"]
    assert ebs["status"] == "complete" and ebs["accounts"] == [ACCOUNT]


def test_terminated_is_final(document: dict[str, Any]) -> None:
    zombie = job(document, "zombie")
    assert Decimal(zombie["cost_usd"]["instance"]) == Decimal("15.05")
    assert zombie["instance_seconds"] == 3600 and zombie["status"] == "complete"
    kinds = [w["kind"] for w in zombie["warnings"]]
    assert kinds.count("event_after_terminated") == 2


def test_a_checkpoint_without_an_instance_makes_a_storage_only_job(
    document: dict[str, Any],
) -> None:
    orphan = job(document, "orphan-ckpt")
    assert Decimal(orphan["cost_usd"]["checkpoint_storage"]) == Decimal(
        "0.007666666666666666666666666667"
    ).quantize(Decimal("1e-9"))
    assert orphan["cost_usd"]["instance"] == "0.000000000" and orphan["checkpoints"] == 1


def test_idle_ends_at_the_stop(document: dict[str, Any]) -> None:
    idle = job(document, "idle-job")
    assert Decimal(idle["cost_usd"]["instance"]) == Decimal("220.16")
    assert Decimal(idle["cost_usd"]["wasted_idle"]) == Decimal("27.52")


def test_unpriced_time_is_kept_and_flagged_everywhere(document: dict[str, Any]) -> None:
    new = job(document, f"untagged:{NEW}")
    assert new["instance_seconds"] == 3600 and new["complete"] is False
    assert "unpriced:ec2:trn2.48xlarge:us-east-1" in new["unconfirmed"]
    (day,) = document["daily_summaries"]
    assert day["complete"] is False


def test_events_after_until_are_listed(document: dict[str, Any]) -> None:
    assert [w["kind"] for w in document["warnings"]] == ["event_after_until"]
    assert "late" in document["warnings"][0]["detail"]
