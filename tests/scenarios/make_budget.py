"""Writes budget_llama.json and its shuffled, duplicated twin (rerun to regenerate)."""

import json
import random
from pathlib import Path

from costtracker.fakes.scenario_events import ec2_state_event

HERE = Path(__file__).parent
A, B = "i-0b0d9e7000000000a", "i-0b0d9e7000000000b"


def state(eid: str, at: str, iid: str, st: str) -> dict:
    return ec2_state_event(eid, iid, st, at)


events = [
    state("b1", "2026-11-01T00:00:00Z", A, "running"),
    state("b2", "2026-11-01T02:00:00Z", B, "running"),
    state("b3", "2026-11-01T16:00:00Z", A, "stopped"),
    state("b4", "2026-11-01T16:00:00Z", B, "stopped"),
]
scenario = {
    "region": "us-east-1",
    "account": "123456789012",
    "prices": {"ec2": {"trn1.32xlarge": "21.50", "p5.48xlarge": "55.04"}},
    "instances": [
        {
            "instance_id": A,
            "instance_type": "trn1.32xlarge",
            "tags": {"training-job": "llama-sft", "project": "llama", "team": "nlp"},
        },
        {
            "instance_id": B,
            "instance_type": "p5.48xlarge",
            "tags": {"training-job": "llama-dpo", "project": "llama", "team": "vision"},
        },
    ],
    "budgets": [
        {
            "budget_id": "llama-total",
            "scope": {"tag": {"project": "llama"}},
            "amount_usd": "1000",
            "period": "total",
            "thresholds": [50, 80, 100],
        }
    ],
    "events": events,
    "until": "2026-11-01T18:00:00Z",
}
(HERE / "budget_llama.json").write_text(json.dumps(scenario, indent=1) + "\n")

# The same runs, each job declaring its length (tag expected-duration-hours): the forecast
# projects to these ends (16 h for llama-sft from 00:00, 14 h for llama-dpo from 02:00).
declared = json.loads(json.dumps(scenario))
for spec, hours in zip(declared["instances"], ("16", "14"), strict=True):
    spec["tags"]["expected-duration-hours"] = hours
(HERE / "budget_llama_declared.json").write_text(json.dumps(declared, indent=1) + "\n")

rng = random.Random(3)
shuffled = [events[1], events[0], events[3], events[1], events[2], events[0]]
(HERE / "budget_llama_shuffled.json").write_text(
    json.dumps({**scenario, "events": shuffled}, indent=1) + "\n"
)
