"""Writes two_jobs.json and its shuffled, duplicated twin (rerun to regenerate)."""

import json
import random
from pathlib import Path

from costtracker.fakes.scenario_events import ec2_state_event, instance_arn

HERE = Path(__file__).parent


def state(eid: str, at: str, iid: str, st: str) -> dict:
    return ec2_state_event(eid, iid, st, at, resources=[instance_arn(iid)])


A1, A2 = "i-0a0000000000000a1", "i-0a0000000000000a2"
B1, C1, D1, E1, U1 = (
    "i-0b0000000000000b1",
    "i-0c0000000000000c1",
    "i-0d0000000000000d1",
    "i-0e0000000000000e1",
    "i-0f0000000000000f1",
)
events = [
    state("e01", "2026-11-01T09:59:50Z", A1, "pending"),
    state("e02", "2026-11-01T10:00:00Z", A1, "running"),
    state("e03", "2026-11-01T10:00:20Z", A2, "running"),
    state("e04", "2026-11-01T10:00:59Z", A2, "stopped"),
    state("e05", "2026-11-01T10:05:00Z", A2, "running"),
    state("e06", "2026-11-01T12:00:00Z", B1, "running"),
    state("e07", "2026-11-01T09:00:00Z", C1, "running"),
    state("e08", "2026-11-01T09:10:00Z", C1, "stopped"),
    state("e09", "2026-11-01T14:30:00Z", A1, "stopping"),
    state("e10", "2026-11-01T14:31:00Z", A1, "stopped"),
    state("e11", "2026-11-01T15:00:00Z", E1, "running"),
    state("e12", "2026-11-01T15:00:00Z", U1, "running"),
    state("e13", "2026-11-01T16:00:00Z", E1, "stopped"),
    state("e14", "2026-11-01T20:00:00Z", A1, "running"),
    state("e15", "2026-11-01T23:00:00Z", D1, "running"),
    state("e16", "2026-11-01T23:59:00Z", D1, "stopped"),
    state("e17", "2026-11-02T02:00:00Z", A2, "shutting-down"),
    state("e18", "2026-11-02T02:00:30Z", A1, "shutting-down"),
    state("e19", "2026-11-02T02:01:00Z", A2, "terminated"),
    state("e20", "2026-11-02T02:01:30Z", A1, "terminated"),
]
events.sort(key=lambda e: e["time"])

llama = {"project": "llama", "team": "nlp", "owner": "ana"}
scenario = {
    "region": "us-east-1",
    "account": "123456789012",
    "prices": {
        "ec2": {"trn1.32xlarge": "21.50", "g5.xlarge": "1.50"},
        "spot": {"p5.48xlarge": "20.00"},
        "ebs_gb_month": {"gp3": "0.08"},
        "s3_gb_month": "0.023",
    },
    "instances": [
        {
            "instance_id": A1,
            "instance_type": "trn1.32xlarge",
            "lifecycle": "on-demand",
            "platform": "Linux/UNIX",
            "tags": {"training-job": "llama-lora-1", **llama},
            "volumes": [{"volume_id": "vol-a1", "size_gib": 512, "volume_type": "gp3"}],
        },
        {
            "instance_id": A2,
            "instance_type": "trn1.32xlarge",
            "lifecycle": "on-demand",
            "platform": "Linux/UNIX",
            "tags": {"training-job": "llama-lora-1", **llama},
            "volumes": [{"volume_id": "vol-a2", "size_gib": 512, "volume_type": "gp3"}],
        },
        {
            "instance_id": B1,
            "instance_type": "p5.48xlarge",
            "lifecycle": "spot",
            "platform": "Linux/UNIX",
            "tags": {"training-job": "p5-baseline", "project": "llama", "team": "vision"},
            "volumes": [{"volume_id": "vol-b1", "size_gib": 1000, "volume_type": "gp3"}],
        },
        {
            "instance_id": C1,
            "instance_type": "g5.xlarge",
            "lifecycle": "on-demand",
            "platform": "SUSE Linux",
            "tags": {"training-job": "suse-eval", "team": "vision"},
            "volumes": [],
        },
        {
            "instance_id": D1,
            "instance_type": "p4d.24xlarge",
            "lifecycle": "on-demand",
            "platform": "Linux/UNIX",
            "tags": {},
            "volumes": [],
        },
        {
            "instance_id": E1,
            "instance_type": "trn2.48xlarge",
            "lifecycle": "on-demand",
            "platform": "Linux/UNIX",
            "tags": {"training-job": "trn2-trial", "team": "nlp"},
            "volumes": [],
        },
        {
            "instance_id": U1,
            "instance_type": "m5.large",
            "lifecycle": "on-demand",
            "platform": "Linux/UNIX",
            "tags": {"Name": "bastion"},
            "volumes": [],
        },
    ],
    "budgets": [],
    "events": events,
    "until": "2026-11-02T03:00:00Z",
}
(HERE / "two_jobs.json").write_text(json.dumps(scenario, indent=1) + "\n")

# The same events as AWS may deliver them: duplicated and arriving out of order.
rng = random.Random(7)
noisy = events + [rng.choice(events) for _ in range(8)]
keyed = [(i + rng.uniform(-6, 6), e) for i, e in enumerate(noisy)]
shuffled = [e for _, e in sorted(keyed, key=lambda p: p[0])]
# A `running` that arrives after its `stopped`, and a terminated before its shutdown.
shuffled.remove(events[[e["id"] for e in events].index("e03")])
shuffled.append(events[[e["id"] for e in events].index("e03")])
(HERE / "two_jobs_shuffled.json").write_text(
    json.dumps({**scenario, "events": shuffled}, indent=1) + "\n"
)
