"""Writes examples/llama-lora-vs-p5.json: a 2-node trn1.32xlarge LoRA fine-tune beside a
p5.48xlarge spot baseline over two days (rerun to regenerate)."""

import json
from pathlib import Path


def state(n: int, at: str, iid: str, st: str) -> dict:
    return {
        "version": "0", "id": f"demo-{n:03d}",
        "detail-type": "EC2 Instance State-change Notification", "source": "aws.ec2",
        "account": "123456789012", "time": at, "region": "us-east-1",
        "resources": [f"arn:aws:ec2:us-east-1:123456789012:instance/{iid}"],
        "detail": {"instance-id": iid, "state": st},
    }


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
    ("2026-11-01T09:30:00Z", PREP, "stopped"),
    ("2026-11-01T10:00:00Z", P5, "running"),
    ("2026-11-01T21:00:00Z", TRN_B, "stopping"),
    ("2026-11-01T21:01:10Z", TRN_B, "stopped"),
    ("2026-11-01T22:15:00Z", TRN_B, "running"),
    ("2026-11-02T06:00:00Z", P5, "stopped"),
    ("2026-11-02T07:30:00Z", P5, "running"),
    ("2026-11-02T16:00:00Z", TRN_A, "shutting-down"),
    ("2026-11-02T16:00:30Z", TRN_B, "shutting-down"),
    ("2026-11-02T16:01:00Z", TRN_A, "terminated"),
    ("2026-11-02T16:01:20Z", TRN_B, "terminated"),
]
events = [state(n, at, iid, st) for n, (at, iid, st) in enumerate(timeline, 1)]
# As AWS may deliver them: one duplicate, one late arrival.
events.insert(3, events[1])
events.append(state(99, "2026-11-01T22:14:00Z", TRN_B, "pending"))

lora = {"project": "llama", "team": "nlp", "owner": "ana", "cost-center": "cc-4410"}
scenario = {
    "region": "us-east-1",
    "account": "123456789012",
    "prices": {"ec2": {"m5.large": "0.096"}, "spot": {"p5.48xlarge": "21.90"}},
    "instances": [
        {"instance_id": TRN_A, "instance_type": "trn1.32xlarge",
         "tags": {"training-job": "llama3-8b-lora", **lora},
         "volumes": [{"size_gib": 1024, "volume_type": "gp3"}]},
        {"instance_id": TRN_B, "instance_type": "trn1.32xlarge",
         "tags": {"training-job": "llama3-8b-lora", **lora},
         "volumes": [{"size_gib": 1024, "volume_type": "gp3"}]},
        {"instance_id": PREP, "instance_type": "m5.large",
         "tags": {"training-job": "llama3-8b-lora", **lora}, "volumes": []},
        {"instance_id": P5, "instance_type": "p5.48xlarge", "lifecycle": "spot",
         "tags": {"training-job": "llama3-8b-lora-gpu-baseline", "project": "llama",
                  "team": "nlp", "owner": "ben"},
         "volumes": [{"size_gib": 2048, "volume_type": "gp3"}]},
    ],
    "events": events,
    "until": "2026-11-03T00:00:00Z",
}
Path(__file__).with_name("llama-lora-vs-p5.json").write_text(json.dumps(scenario, indent=1) + "\n")
