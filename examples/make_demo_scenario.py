"""Writes costtracker/examples/llama-lora-vs-p5.json (package data: the demo's scenario):
the same LoRA fine-tune of Llama 3 8B (same global batch, so the same tokens per step,
to the same 6,000 steps) run twice: on two
on-demand trn1.32xlarge (with an m5.large data-prep node) and on one p5.48xlarge spot
instance that is stopped and resumed once. Both write a checkpoint every 500 steps, so
`costtracker jobs compare` shows $/step and $/1M tokens for both (rerun to regenerate).
The accelerators' utilization metric has five-minute datapoints for part of each run
(the rest is "not measured"), so the comparison also shows $/accelerator-hour, measured
utilization and the share of the time it rests on.
"""

import json
import zlib
from datetime import datetime, timedelta
from pathlib import Path

from costtracker.fakes.scenario_events import (
    ACCOUNT,
    REGION,
    ec2_state_event,
    instance_arn,
    s3_object_event,
)

BUCKET = "llama-checkpoints"
TRN_JOB, GPU_JOB = "llama3-8b-lora", "llama3-8b-lora-gpu-baseline"
STEPS, EVERY = 6000, 500
# 64 sequences of 4,096 tokens per optimizer step, in both runs.
TOKENS_PER_STEP = "262144"
# A LoRA adapter with its optimizer state: about 160 MiB per checkpoint.
CHECKPOINT_BYTES = 160 * 2**20


def state(n: int, at: str, iid: str, st: str) -> dict:
    return ec2_state_event(f"demo-{n:03d}", iid, st, at, resources=[instance_arn(iid)])


def checkpoint(job: str, step: int, at: datetime) -> dict:
    key = f"runs/{job}/step-{step}/adapter.safetensors"
    eid = f"ckpt-{zlib.crc32(key.encode()):08x}"
    return s3_object_event(
        eid,
        BUCKET,
        key,
        at,
        resources=[f"arn:aws:s3:::{BUCKET}"],
        size=CHECKPOINT_BYTES,
        etag="d41d8cd98f00b204e9800998ecf8427e",
        sequencer=f"00{zlib.crc32(eid.encode()):08X}",
    )


def checkpoints(job: str, windows: list[tuple[str, str]]) -> list[dict]:
    """A checkpoint every EVERY steps, the steps spread evenly over the running windows."""
    spans = [(datetime.fromisoformat(a), datetime.fromisoformat(b)) for a, b in windows]
    running = sum(((b - a) for a, b in spans), timedelta())
    out = []
    for step in range(EVERY, STEPS + 1, EVERY):
        left = running * step / STEPS
        for a, b in spans:
            if left <= b - a:
                out.append(checkpoint(job, step, a + left))
                break
            left -= b - a
    return out


TRN_A, TRN_B, P5, PREP = (
    "i-0a1a1a1a1a1a1a1a1",
    "i-0b2b2b2b2b2b2b2b2",
    "i-0c3c3c3c3c3c3c3c3",
    "i-0d4d4d4d4d4d4d4d4",
)
timeline = [
    ("2026-11-01T08:00:00Z", PREP, "running"),
    ("2026-11-01T09:00:00Z", TRN_A, "running"),
    ("2026-11-01T09:00:40Z", TRN_B, "running"),
    ("2026-11-01T09:30:00Z", PREP, "terminated"),
    ("2026-11-01T10:00:00Z", P5, "running"),
    ("2026-11-01T21:00:00Z", TRN_B, "stopping"),
    ("2026-11-01T21:01:10Z", TRN_B, "stopped"),
    ("2026-11-01T22:15:00Z", TRN_B, "running"),
    ("2026-11-02T06:00:00Z", P5, "stopped"),
    ("2026-11-02T07:30:00Z", P5, "running"),
    ("2026-11-02T12:10:00Z", P5, "shutting-down"),
    ("2026-11-02T12:11:00Z", P5, "terminated"),
    ("2026-11-02T16:00:00Z", TRN_A, "shutting-down"),
    ("2026-11-02T16:00:30Z", TRN_B, "shutting-down"),
    ("2026-11-02T16:01:00Z", TRN_A, "terminated"),
    ("2026-11-02T16:01:20Z", TRN_B, "terminated"),
]
events = [state(n, at, iid, st) for n, (at, iid, st) in enumerate(timeline, 1)]
# The Trainium run pauses while node B is down (data parallel over both nodes).
events += checkpoints(
    TRN_JOB,
    [
        ("2026-11-01T09:00:40+00:00", "2026-11-01T21:00:00+00:00"),
        ("2026-11-01T22:15:00+00:00", "2026-11-02T15:55:00+00:00"),
    ],
)
events += checkpoints(
    GPU_JOB,
    [
        ("2026-11-01T10:00:00+00:00", "2026-11-02T05:40:00+00:00"),
        ("2026-11-02T07:30:00+00:00", "2026-11-02T12:05:00+00:00"),
    ],
)
events.sort(key=lambda e: (e["time"], e["id"]))
# As AWS may deliver them: one duplicate, one late arrival.
events.insert(3, events[1])
events.append(state(99, "2026-11-01T22:14:00Z", TRN_B, "pending"))


def metric_points(start: str, hours: int, low: int, spread: int) -> list[dict]:
    """Five-minute datapoints (percent) for ``hours`` from ``start``: a fixed pattern
    between ``low`` and ``low + spread``, so the file does not change when regenerated."""
    at = datetime.fromisoformat(start)
    return [
        {
            "t": (at + timedelta(minutes=5 * k)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "v": f"{low + (k * 37) % (spread * 10) / 10:.1f}",
        }
        for k in range(hours * 12)
    ]


# NeuronCore utilization (neuron-monitor, InstanceId dimension) and GPU utilization (the
# CloudWatch agent's InstanceId aggregate) for part of each run.
metrics = [
    {
        "instance_id": TRN_A,
        "period": 300,
        "points": metric_points("2026-11-01T12:00:00+00:00", 24, 62, 25),
    },
    {
        "instance_id": TRN_B,
        "period": 300,
        "points": metric_points("2026-11-01T22:15:00+00:00", 12, 58, 25),
    },
    {
        "instance_id": P5,
        "period": 300,
        "points": metric_points("2026-11-01T10:00:00+00:00", 18, 81, 12),
    },
]

lora = {
    "project": "llama",
    "team": "nlp",
    "owner": "ana",
    "cost-center": "cc-4410",
    "tokens-per-step": TOKENS_PER_STEP,
}
scenario = {
    "region": REGION,
    "account": ACCOUNT,
    "prices": {"ec2": {"m5.large": "0.096"}, "spot": {"p5.48xlarge": "21.90"}},
    "checkpoint": {"buckets": [BUCKET]},
    "instances": [
        {
            "instance_id": TRN_A,
            "instance_type": "trn1.32xlarge",
            "tags": {"training-job": TRN_JOB, **lora},
            "volumes": [{"size_gib": 1024, "volume_type": "gp3"}],
        },
        {
            "instance_id": TRN_B,
            "instance_type": "trn1.32xlarge",
            "tags": {"training-job": TRN_JOB, **lora},
            "volumes": [{"size_gib": 1024, "volume_type": "gp3"}],
        },
        {
            "instance_id": PREP,
            "instance_type": "m5.large",
            "tags": {"training-job": TRN_JOB, **lora},
            "volumes": [],
        },
        {
            "instance_id": P5,
            "instance_type": "p5.48xlarge",
            "lifecycle": "spot",
            "tags": {
                "training-job": GPU_JOB,
                "project": "llama",
                "team": "nlp",
                "owner": "ben",
                "tokens-per-step": TOKENS_PER_STEP,
            },
            "volumes": [{"size_gib": 2048, "volume_type": "gp3"}],
        },
    ],
    "metrics": metrics,
    "events": events,
    "until": "2026-11-03T00:00:00Z",
}
OUT = Path(__file__).parent.parent / "costtracker" / "examples" / "llama-lora-vs-p5.json"
OUT.write_text(json.dumps(scenario, indent=1) + "\n")
