"""Writes managed_training.json and capacity_blocks.json (+ shuffled, duplicated twins) and
their hand-calculated expected figures (expected/<name>.json). Rerun to regenerate.

The expected figures below are written by hand, NOT computed by the code under test;
tests/unit/test_managed_scenarios.py checks that the pure rules reproduce them.

managed_training.json: SageMaker ml.trn1.32xlarge at $24.72/h (the scenario's own rate),
ML storage $0.14/GB-month, November = 30 days = 2,592,000 s.

  llama-sft-spot (job A "llama-sft-spot-a", 2 nodes, managed spot, 600 GB, STOPPED)
    TrainingStartTime 11-03 08:00:00, TrainingEndTime 11:00:00: training 10,800 s,
    billable 4,320 s (DescribeTrainingJob)
    instance   = 4,320 x 2 x 24.72 / 3600          = 8,640 / 3600 x 24.72 = 2.4 x 24.72 = 59.328
    ml_storage = 2 x 600 x 0.14 x 10,800 / 2,592,000 = 168 / 240                   = 0.7
    saving     = 1 - 4,320 / 10,800                                                  = 0.6
    instance_seconds = 4,320 x 2 = 8,640; total = 59.328 + 0.7 = 60.028
    while InProgress at 11-03 09:30:00 (an estimate, from TrainingStartTime):
    instance = 5,400 x 2 x 24.72 / 3600 = 3 x 24.72 = 74.16;
    ml_storage = 168 x 5,400 / 2,592,000 = 168 / 480 = 0.35; total 74.51

  sagemaker:llama-sft-spot-b (no job tag; 2 nodes, managed spot, 900 GB, COMPLETED)
    11-04 00:00 -> 20:00: training 72,000 s, billable 50,400 s
    instance   = 50,400 x 2 x 24.72 / 3600 = 28 x 24.72                 = 692.16
    ml_storage = 2 x 900 x 0.14 x 72,000 / 2,592,000 = 252 / 36          = 7
    saving = 1 - 50,400 / 72,000 = 0.3; instance_seconds 100,800; total 699.16

  llama-eval (job C "llama-eval-c", 2 nodes on demand, 288 GB, warm pool, COMPLETED)
    11-05 10:00 -> 12:30: training = billable = 9,000 s; warm pool retained 1,800 s
    instance   = 9,000 x 2 x 24.72 / 3600 = 5 x 24.72                    = 123.6
    ml_storage = 2 x 288 x 0.14 x 9,000 / 2,592,000 = 80.64 / 288         = 0.28
    warm_pool  = 1,800 x 2 x 24.72 / 3600 = 24.72
    instance_seconds 18,000; no saving (not spot); total 148.6

capacity_blocks.json:

  Capacity Block cr-0b1c000000000000b: 4 x p5.48xlarge, 11-10 11:30 -> 11-12 11:30 (48 h),
  upfront fee $6,000, no job tag (tags project/team only).
    reserved = 4 x 48 h = 192 instance-hours = 691,200 instance-seconds
    share = 6,000 / 192 = $31.25 per instance-hour
    p5-pretrain: 4 instances 11-10 12:00 -> 11-11 06:00 (18 h), gap, 4 new instances
                 11-11 08:00 -> 20:00 (12 h): 30 h x 4 = 120 instance-hours = 432,000 s
                 instance = 120 x 31.25 = 3,750
    p5-eval:     2 instances 11-11 22:00 -> 11-12 10:00 (12 h): 24 instance-hours = 86,400 s
                 instance = 24 x 31.25 = 750
    unused = 192 - 120 - 24 = 48 instance-hours = 172,800 s (25 %)
    wasted_reserved on reservation:cr-0b1c000000000000b = 48 x 31.25 = 1,500
    3,750 + 750 + 1,500 = 6,000 = the fee.
    Forecast at 11-11 00:00 (12.5 h in): reserved so far 50 inst-h, used 48 (4 x 12 h),
      unused 2; 4 running; at the current pace the rest is used: unused = 2 / 192 = 1.04 % -> "1 %"
      average pace: 1 - 48 / 50 = 0.04
    Forecast at 11-11 07:00 (19.5 h in, in the gap): reserved so far 78, used 72, unused 6;
      none running, 28.5 h left x 4 = 114 idle: unused = 120 / 192 = 0.625 -> "63 %"
      average pace: 1 - 72 / 78 = 0.0769230769...
    Daily use: 11-10: 48 / 50 = 0.96; 11-11: (24 + 48 + 4) / 96 = 76/96; 11-12: 20 / 46.

  ODCR cr-0dc0000000000000d: 2 x trn1.32xlarge ($21.50/h on demand), 11-13 00:00 -> 11-14
  00:00 (24 h), tag training-job=trn-odcr-job. Reserved 48 instance-hours.
    O1 00:00 -> 16:00 (16 h), O2 04:00 -> 12:00 (8 h): used 24 instance-hours = 86,400 s
    instance (the usual rule 1) = 24 x 21.50 = 516
    wasted_reserved = (48 - 24) x 21.50 = 516 on trn-odcr-job (its job tag); total 1,032
    daily use 11-13: 24 / 48 = 0.5
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from costtracker.fakes.scenario_events import (
    ACCOUNT,
    REGION,
    capacity_block_event,
    ec2_state_event,
    epoch_ms,
    instance_arn,
    training_job_arn,
    training_job_event,
)

HERE = Path(__file__).parent
# Not beside the scenarios: every tests/scenarios/*.json is replayed as a scenario.
EXPECTED = HERE / "expected"


def sagemaker(
    eid: str,
    at: str,
    name: str,
    status: str,
    secondary: str,
    *,
    count: int,
    volume: int,
    created: str,
    start: str | None = None,
    end: str | None = None,
    spot: bool = False,
    tags: dict[str, str] | None = None,
    keep_alive: int | None = None,
    as_strings: bool = True,
) -> dict[str, Any]:
    """A SageMaker Training Job State Change as AWS sends it (times in epoch ms; the AWS
    sample writes them as strings, so do most events here; some use numbers)."""

    def t(value: str) -> str | int:
        return str(epoch_ms(value)) if as_strings else epoch_ms(value)

    arn = training_job_arn(name)
    resource: dict[str, Any] = {
        "InstanceType": "ml.trn1.32xlarge",
        "InstanceCount": count,
        "VolumeSizeInGB": volume,
    }
    if keep_alive is not None:
        resource["KeepAlivePeriodInSeconds"] = keep_alive
    detail: dict[str, Any] = {
        "TrainingJobName": name,
        "TrainingJobArn": arn,
        "TrainingJobStatus": status,
        "SecondaryStatus": secondary,
        "HyperParameters": {"epochs": "3", "lora_r": "16"},
        "AlgorithmSpecification": {
            "TrainingImage": "763104351884.dkr.ecr.us-east-1.amazonaws.com/"
            "pytorch-training-neuronx:2.1.2-neuronx-py310-sdk2.20.0-ubuntu20.04",
            "TrainingInputMode": "File",
        },
        "RoleArn": f"arn:aws:iam::{ACCOUNT}:role/SMRole",
        "ResourceConfig": resource,
        "StoppingCondition": {"MaxRuntimeInSeconds": 86400}
        | ({"MaxWaitTimeInSeconds": 172800} if spot else {}),
        "EnableManagedSpotTraining": spot,
        "CreationTime": t(created),
        "LastModifiedTime": t(at),
        "SecondaryStatusTransitions": [],
        "Tags": tags or {},
    }
    if start:
        detail["TrainingStartTime"] = t(start)
    if end:
        detail["TrainingEndTime"] = t(end)
    return training_job_event(eid, at, detail)


def state(eid: str, at: str, iid: str, st: str) -> dict[str, Any]:
    return ec2_state_event(eid, iid, st, at, resources=[instance_arn(iid)])


def block_event(eid: str, at: str, kind: str, rid: str, end: str) -> dict[str, Any]:
    return capacity_block_event(eid, rid, kind, at, end=end)


def write(name: str, scenario: dict[str, Any], expected: dict[str, Any], seed: int) -> None:
    (HERE / f"{name}.json").write_text(json.dumps(scenario, indent=1) + "\n")
    EXPECTED.mkdir(exist_ok=True)
    (EXPECTED / f"{name}.json").write_text(json.dumps(expected, indent=1) + "\n")
    events = scenario["events"]
    rng = random.Random(seed)
    noisy = events + [rng.choice(events) for _ in range(4)]
    keyed = [(i + rng.uniform(-5, 5), e) for i, e in enumerate(noisy)]
    shuffled = [e for _, e in sorted(keyed, key=lambda p: p[0])]
    (HERE / f"{name}_shuffled.json").write_text(
        json.dumps({**scenario, "events": shuffled}, indent=1) + "\n"
    )


# -- managed training ------------------------------------------------------------------------

A, B, C = "llama-sft-spot-a", "llama-sft-spot-b", "llama-eval-c"
tags_a = {"training-job": "llama-sft-spot", "project": "llama", "team": "nlp"}
tags_b = {"project": "llama", "team": "nlp"}
tags_c = {"training-job": "llama-eval", "project": "llama", "team": "nlp"}
a = {"count": 2, "volume": 600, "created": "2026-11-03T07:55:00Z", "spot": True, "tags": tags_a}
b = {"count": 2, "volume": 900, "created": "2026-11-03T23:50:00Z", "spot": True, "tags": tags_b}
c = {
    "count": 2,
    "volume": 288,
    "created": "2026-11-05T09:56:00Z",
    "tags": tags_c,
    "keep_alive": 1800,
    "as_strings": False,
}
managed_events = [
    sagemaker("sm-a1", "2026-11-03T07:55:05Z", A, "InProgress", "Starting", **a),
    sagemaker(
        "sm-a2",
        "2026-11-03T08:00:30Z",
        A,
        "InProgress",
        "Training",
        **a,
        start="2026-11-03T08:00:00Z",
    ),
    sagemaker(
        "sm-a3",
        "2026-11-03T10:59:30Z",
        A,
        "Stopping",
        "Stopping",
        **a,
        start="2026-11-03T08:00:00Z",
    ),
    sagemaker(
        "sm-a4",
        "2026-11-03T11:00:40Z",
        A,
        "Stopped",
        "Stopped",
        **a,
        start="2026-11-03T08:00:00Z",
        end="2026-11-03T11:00:00Z",
    ),
    sagemaker("sm-b1", "2026-11-03T23:50:05Z", B, "InProgress", "Starting", **b),
    sagemaker(
        "sm-b2",
        "2026-11-04T00:00:40Z",
        B,
        "InProgress",
        "Training",
        **b,
        start="2026-11-04T00:00:00Z",
    ),
    sagemaker(
        "sm-b3",
        "2026-11-04T20:01:00Z",
        B,
        "Completed",
        "Completed",
        **b,
        start="2026-11-04T00:00:00Z",
        end="2026-11-04T20:00:00Z",
    ),
    sagemaker("sm-c1", "2026-11-05T09:56:05Z", C, "InProgress", "Starting", **c),
    sagemaker(
        "sm-c2",
        "2026-11-05T10:00:20Z",
        C,
        "InProgress",
        "Training",
        **c,
        start="2026-11-05T10:00:00Z",
    ),
    sagemaker(
        "sm-c3",
        "2026-11-05T12:30:30Z",
        C,
        "Completed",
        "Completed",
        **c,
        start="2026-11-05T10:00:00Z",
        end="2026-11-05T12:30:00Z",
    ),
]
# SageMaker may send several events for one state change: a second "Completed" (new id).
managed_events.append({**managed_events[-1], "id": "sm-c3-again", "time": "2026-11-05T12:30:45Z"})
managed_events.sort(key=lambda e: e["time"])

managed = {
    "region": REGION,
    "account": ACCOUNT,
    "prices": {"sagemaker": {"ml.trn1.32xlarge": "24.72"}, "sagemaker_storage_gb_month": "0.14"},
    "training_jobs": [
        {
            "name": A,
            "instance_type": "ml.trn1.32xlarge",
            "instance_count": 2,
            "volume_gb": 600,
            "training_seconds": 10800,
            "billable_seconds": 4320,
            "warm_pool_seconds": 0,
            "spot": True,
            "tags": tags_a,
        },
        {
            "name": B,
            "instance_type": "ml.trn1.32xlarge",
            "instance_count": 2,
            "volume_gb": 900,
            "training_seconds": 72000,
            "billable_seconds": 50400,
            "warm_pool_seconds": 0,
            "spot": True,
            "tags": tags_b,
        },
        {
            "name": C,
            "instance_type": "ml.trn1.32xlarge",
            "instance_count": 2,
            "volume_gb": 288,
            "training_seconds": 9000,
            "billable_seconds": 9000,
            "warm_pool_seconds": 1800,
            "spot": False,
            "tags": tags_c,
        },
    ],
    "events": managed_events,
    "until": "2026-11-06T00:00:00Z",
}
managed_expected = {
    "scenario": "managed_training.json",
    "hand_calculation": "tests/scenarios/make_managed.py (module docstring)",
    "jobs": [
        {
            "job_id": "llama-sft-spot",
            "training_job_name": A,
            "status": "stopped",
            "cost_usd": {
                "total": "60.028",
                "instance": "59.328",
                "ml_storage": "0.7",
                "warm_pool": "0",
            },
            "instance_seconds": 8640,
            "managed_spot_saving": "0.6",
            "complete": True,
        },
        {
            "job_id": f"sagemaker:{B}",
            "training_job_name": B,
            "status": "complete",
            "cost_usd": {
                "total": "699.16",
                "instance": "692.16",
                "ml_storage": "7",
                "warm_pool": "0",
            },
            "instance_seconds": 100800,
            "managed_spot_saving": "0.3",
            "complete": True,
        },
        {
            "job_id": "llama-eval",
            "training_job_name": C,
            "status": "complete",
            "cost_usd": {
                "total": "148.6",
                "instance": "123.6",
                "ml_storage": "0.28",
                "warm_pool": "24.72",
            },
            "instance_seconds": 18000,
            "managed_spot_saving": None,
            "complete": True,
        },
    ],
    "at": [
        {
            "time": "2026-11-03T09:30:00Z",
            "job_id": "llama-sft-spot",
            "status": "running",
            "cost_usd": {
                "total": "74.51",
                "instance": "74.16",
                "ml_storage": "0.35",
                "warm_pool": "0",
            },
            "instance_seconds": 10800,
            "billed": False,
        },
    ],
}
write("managed_training", managed, managed_expected, seed=17)

# -- capacity blocks and an ODCR -------------------------------------------------------------

BLOCK, ODCR = "cr-0b1c000000000000b", "cr-0dc0000000000000d"
X1 = [f"i-0a{n:015x}" for n in range(1, 5)]  # p5-pretrain, first stretch
X2 = [f"i-0a{n:015x}" for n in range(5, 9)]  # p5-pretrain, relaunched after the gap
Y = [f"i-0e{n:015x}" for n in range(1, 3)]  # p5-eval
O1, O2 = "i-0d0000000000000d1", "i-0d0000000000000d2"
pretrain = {"training-job": "p5-pretrain", "project": "llama", "team": "vision"}
evaluate = {"training-job": "p5-eval", "project": "llama", "team": "vision"}
odcr_job = {"training-job": "trn-odcr-job", "project": "llama", "team": "nlp"}


def block_instance(iid: str, tags: dict[str, str]) -> dict[str, Any]:
    return {
        "instance_id": iid,
        "instance_type": "p5.48xlarge",
        "lifecycle": "capacity-block",
        "capacity_reservation_id": BLOCK,
        "platform": "Linux/UNIX",
        "tags": tags,
        "volumes": [],
    }


def odcr_instance(iid: str) -> dict[str, Any]:
    return {
        "instance_id": iid,
        "instance_type": "trn1.32xlarge",
        "lifecycle": "on-demand",
        "capacity_reservation_id": ODCR,
        "platform": "Linux/UNIX",
        "tags": odcr_job,
        "volumes": [],
    }


def run(prefix: str, ids: list[str], launch: str, up: str, down: str, gone: str) -> list[dict]:
    out = []
    for n, iid in enumerate(ids):
        out += [
            state(f"{prefix}{n}-p", launch, iid, "pending"),
            state(f"{prefix}{n}-r", up, iid, "running"),
            state(f"{prefix}{n}-s", down, iid, "shutting-down"),
            state(f"{prefix}{n}-t", gone, iid, "terminated"),
        ]
    return out


block_events = [
    block_event(
        "cb-delivered",
        "2026-11-10T11:30:00Z",
        "Capacity Block Delivered",
        BLOCK,
        "2026-11-12T11:30:00Z",
    ),
    *run(
        "x1-",
        X1,
        "2026-11-10T11:59:30Z",
        "2026-11-10T12:00:00Z",
        "2026-11-11T06:00:00Z",
        "2026-11-11T06:01:00Z",
    ),
    *run(
        "x2-",
        X2,
        "2026-11-11T07:59:30Z",
        "2026-11-11T08:00:00Z",
        "2026-11-11T20:00:00Z",
        "2026-11-11T20:01:00Z",
    ),
    *run(
        "y-",
        Y,
        "2026-11-11T21:59:30Z",
        "2026-11-11T22:00:00Z",
        "2026-11-12T10:00:00Z",
        "2026-11-12T10:01:00Z",
    ),
    block_event(
        "cb-expiring",
        "2026-11-12T10:50:00Z",
        "Capacity Block Expiration Warning",
        BLOCK,
        "2026-11-12T11:30:00Z",
    ),
    *run(
        "o1-",
        [O1],
        "2026-11-12T23:59:30Z",
        "2026-11-13T00:00:00Z",
        "2026-11-13T16:00:00Z",
        "2026-11-13T16:01:00Z",
    ),
    *run(
        "o2-",
        [O2],
        "2026-11-13T03:59:30Z",
        "2026-11-13T04:00:00Z",
        "2026-11-13T12:00:00Z",
        "2026-11-13T12:01:00Z",
    ),
]
block_events.sort(key=lambda e: e["time"])
blocks = {
    "region": REGION,
    "account": ACCOUNT,
    "prices": {"ec2": {"trn1.32xlarge": "21.50", "p5.48xlarge": "55.04"}},
    "capacity_reservations": [
        {
            "reservation_id": BLOCK,
            "kind": "capacity-block",
            "instance_type": "p5.48xlarge",
            "instance_count": 4,
            "start": "2026-11-10T11:30:00Z",
            "end": "2026-11-12T11:30:00Z",
            "upfront_fee_usd": "6000",
            "tags": {"project": "llama", "team": "vision"},
        },
        {
            "reservation_id": ODCR,
            "kind": "odcr",
            "instance_type": "trn1.32xlarge",
            "instance_count": 2,
            "start": "2026-11-13T00:00:00Z",
            "end": "2026-11-14T00:00:00Z",
            "tags": odcr_job,
        },
    ],
    "instances": [
        *[block_instance(i, pretrain) for i in X1 + X2],
        *[block_instance(i, evaluate) for i in Y],
        odcr_instance(O1),
        odcr_instance(O2),
    ],
    "events": block_events,
    "until": "2026-11-14T00:00:00Z",
}
blocks_expected = {
    "scenario": "capacity_blocks.json",
    "hand_calculation": "tests/scenarios/make_managed.py (module docstring)",
    "jobs": [
        {
            "job_id": "p5-pretrain",
            "status": "complete",
            "cost_usd": {"total": "3750", "instance": "3750"},
            "instance_seconds": 432000,
            "complete": True,
        },
        {
            "job_id": "p5-eval",
            "status": "complete",
            "cost_usd": {"total": "750", "instance": "750"},
            "instance_seconds": 86400,
            "complete": True,
        },
        {
            "job_id": f"reservation:{BLOCK}",
            "status": "complete",
            "cost_usd": {"total": "1500", "instance": "0", "wasted_reserved": "1500"},
            "instance_seconds": 0,
            "complete": True,
        },
        {
            "job_id": "trn-odcr-job",
            "status": "complete",
            "cost_usd": {"total": "1032", "instance": "516", "wasted_reserved": "516"},
            "instance_seconds": 86400,
            "complete": True,
        },
    ],
    "reservations": [
        {
            "reservation_id": BLOCK,
            "kind": "capacity-block",
            "reserved_instance_seconds": 691200,
            "used_instance_seconds": 518400,
            "unused_instance_seconds": 172800,
            "utilization": "0.75",
            "usd_per_instance_hour": "31.25",
            "wasted_job_id": f"reservation:{BLOCK}",
            "wasted_reserved_usd": "1500",
            "daily_utilization": {
                "2026-11-10": "0.96",
                "2026-11-11": "76/96",
                "2026-11-12": "20/46",
            },
        },
        {
            "reservation_id": ODCR,
            "kind": "odcr",
            "reserved_instance_seconds": 172800,
            "used_instance_seconds": 86400,
            "unused_instance_seconds": 86400,
            "utilization": "0.5",
            "usd_per_instance_hour": "21.50",
            "wasted_job_id": "trn-odcr-job",
            "wasted_reserved_usd": "516",
            "daily_utilization": {"2026-11-13": "0.5"},
        },
    ],
    "forecasts": [
        {
            "reservation_id": BLOCK,
            "at": "2026-11-11T00:00:00Z",
            "running_now": 4,
            "unused_fraction_at_current_pace": "2/192",
            "unused_fraction_at_average_pace": "0.04",
            "message": "you will leave 1 % of this block unused at the current pace",
        },
        {
            "reservation_id": BLOCK,
            "at": "2026-11-11T07:00:00Z",
            "running_now": 0,
            "unused_fraction_at_current_pace": "0.625",
            "unused_fraction_at_average_pace": "6/78",
            "message": "you will leave 63 % of this block unused at the current pace",
        },
    ],
}
write("capacity_blocks", blocks, blocks_expected, seed=23)
