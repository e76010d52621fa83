"""Writes measured_utilization.json: rule 10 worked by hand (docs/utilization.md).

Job ``measured-llama``: two trn1.32xlarge (16 chips each), one trn1.2xlarge (1 chip)
and one c5.xlarge data-prep node, 2026-11-01 00:00 to 02:00 (7,200 s each).
- i-...a1 has 12 five-minute datapoints of 80 % from 00:00 (one hour covered);
- i-...a2 has 6 datapoints of 50 % from 01:00 (half an hour covered);
- i-...a3 has none; the c5 node has no accelerator and is not measured.
By hand: running seconds of the accelerator instances 21,600; covered 3,600 + 1,800 =
5,400; utilization (0.8 x 3,600 + 0.5 x 1,800) / 5,400 = 0.7; measured share 5,400 /
21,600 = 0.25; accelerator-seconds 7,200 x (16 + 16 + 1) = 237,600 (66 accelerator-hours);
effective accelerator-hours (0.8 x 3,600 x 16 + 0.5 x 1,800 x 16) / 3,600 = 16.8;
$/accelerator-hour: instance cost (21.50 x 2 x 2 + 1.34375 x 2 + 0.17 x 2) / 66.
Job ``unmeasured-gpu``: one p5.48xlarge 00:00-01:00 with no datapoints: utilization
null, accelerator-seconds 3,600 x 8 = 28,800.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from costtracker.fakes.scenario_events import (
    ACCOUNT,
    REGION,
    ec2_state_event,
    instance_arn,
)

A1, A2, A3, CPU, GPU = (
    "i-0a1000000000000a1",
    "i-0a1000000000000a2",
    "i-0a1000000000000a3",
    "i-0c1000000000000c1",
    "i-0b1000000000000b1",
)
T0 = datetime(2026, 11, 1, tzinfo=UTC)


def iso(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def state(n: int, instance: str, state: str, at: datetime) -> dict[str, object]:
    return ec2_state_event(f"mu-{n:02d}", instance, state, at, resources=[instance_arn(instance)])


def points(start: datetime, n: int, percent: str) -> list[dict[str, str]]:
    return [{"t": iso(start + timedelta(minutes=5 * k)), "v": percent} for k in range(n)]


def scenario() -> dict[str, object]:
    job = {"training-job": "measured-llama", "project": "llama", "team": "nlp"}
    events = []
    for n, instance in enumerate((A1, A2, A3, CPU)):
        events.append(state(n, instance, "running", T0))
        events.append(state(10 + n, instance, "terminated", T0 + timedelta(hours=2)))
    events.append(state(20, GPU, "running", T0))
    events.append(state(21, GPU, "terminated", T0 + timedelta(hours=1)))
    events.sort(key=lambda e: str(e["time"]))
    return {
        "region": REGION,
        "account": ACCOUNT,
        "prices": {"ec2": {"trn1.32xlarge": "21.50", "c5.xlarge": "0.17", "p5.48xlarge": "55.04"}},
        "instances": [
            {"instance_id": A1, "instance_type": "trn1.32xlarge", "tags": job},
            {"instance_id": A2, "instance_type": "trn1.32xlarge", "tags": job},
            {"instance_id": A3, "instance_type": "trn1.2xlarge", "tags": job},
            {"instance_id": CPU, "instance_type": "c5.xlarge", "tags": job},
            {
                "instance_id": GPU,
                "instance_type": "p5.48xlarge",
                "tags": {"training-job": "unmeasured-gpu", "team": "vision"},
            },
        ],
        "metrics": [
            {"instance_id": A1, "period": 300, "points": points(T0, 12, "80")},
            {"instance_id": A2, "period": 300, "points": points(T0 + timedelta(hours=1), 6, "50")},
        ],
        "events": events,
        "until": iso(T0 + timedelta(hours=25)),
    }


if __name__ == "__main__":
    out = Path(__file__).with_name("measured_utilization.json")
    out.write_text(json.dumps(scenario(), indent=1) + "\n")
