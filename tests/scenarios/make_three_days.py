"""Writes three_days.json and its shuffled, duplicated twin (rerun to regenerate)."""

import json
import random
from pathlib import Path

from costtracker.fakes.scenario_events import ec2_state_event

HERE = Path(__file__).parent
X, Y, U = "i-0c3d0000000000aa1", "i-0c3d0000000000bb2", "i-0c3d0000000000cc3"


def state(eid: str, at: str, iid: str, st: str) -> dict:
    return ec2_state_event(eid, iid, st, at)


events = [
    state("d1", "2026-11-01T20:00:00Z", X, "running"),
    state("d2", "2026-11-02T12:00:00Z", Y, "running"),
    state("d3", "2026-11-02T12:00:30Z", Y, "stopped"),
    state("d4", "2026-11-02T23:59:30Z", Y, "running"),
    state("d5", "2026-11-03T00:00:20Z", Y, "stopped"),
    state("d6", "2026-11-03T04:00:00Z", X, "stopped"),
    state("d7", "2026-11-03T10:00:00Z", U, "running"),
    state("d8", "2026-11-03T11:00:00Z", U, "stopped"),
]
scenario = {
    "region": "us-east-1",
    "account": "123456789012",
    "prices": {
        "ec2": {"trn1.32xlarge": "21.50"},
        "spot": {"p5.48xlarge": "20.00"},
        "ebs_gb_month": {"gp3": "0.08"},
    },
    "instances": [
        {
            "instance_id": X,
            "instance_type": "trn1.32xlarge",
            "tags": {
                "training-job": "alpha-pretrain",
                "project": "alpha",
                "team": "nlp",
                "owner": "ana",
            },
            "volumes": [{"size_gib": 100, "volume_type": "gp3"}],
        },
        {
            "instance_id": Y,
            "instance_type": "p5.48xlarge",
            "lifecycle": "spot",
            "tags": {"training-job": "beta-sweep", "project": "beta", "team": "vision"},
        },
        {"instance_id": U, "instance_type": "p4d.24xlarge", "tags": {}},
    ],
    "events": events,
    "until": "2026-11-04T00:00:00Z",
}
(HERE / "three_days.json").write_text(json.dumps(scenario, indent=1) + "\n")
rng = random.Random(2)
shuffled = [
    events[1],
    events[0],
    events[2],
    events[4],
    events[3],
    events[2],
    events[6],
    events[5],
    events[7],
    events[4],
]
(HERE / "three_days_shuffled.json").write_text(
    json.dumps({**scenario, "events": shuffled}, indent=1) + "\n"
)
