"""Writes idle_alarms.json and its shuffled, duplicated twin (rerun to regenerate)."""

import json
import random
from pathlib import Path

from costtracker.fakes.scenario_events import ACCOUNT, REGION, alarm_state_event, ec2_state_event

HERE = Path(__file__).parent
T1, P1, GHOST = "i-0e1000000000000e1", "i-0e2000000000000e2", "i-0fff00000000000ff"
METRICS = {
    "neuron": ("NeuronMonitor", "neuroncore_utilization"),
    "gpu": ("CWAgent", "nvidia_smi_utilization_gpu"),
    "cpu": ("AWS/EC2", "CPUUtilization"),
    "net": ("AWS/EC2", "NetworkIn"),
}
# What each alarm compares (the tracker's defaults: accelerator 5 %, CPU 10 %).
THRESHOLDS = {"neuron": 5.0, "gpu": 5.0, "cpu": 10.0, "net": 1000.0}


def state(eid: str, at: str, iid: str, st: str) -> dict:
    return ec2_state_event(eid, iid, st, at)


def alarm(eid: str, at: str, name: str, metric: str, iid: str, value: str, prev: str) -> dict:
    return alarm_state_event(
        eid,
        name,
        value,
        at,
        metric=METRICS[metric],
        instance_id=iid,
        previous=prev,
        threshold=THRESHOLDS[metric],
    )


def ours(iid: str, signal: str) -> str:
    return f"costtracker-{iid}-{signal}-low"


events = [
    state("s1", "2026-11-01T10:00:00Z", T1, "running"),
    state("s2", "2026-11-01T10:00:00Z", P1, "running"),
    alarm(
        "a01",
        "2026-11-01T10:35:00Z",
        ours(T1, "accelerator"),
        "neuron",
        T1,
        "OK",
        "INSUFFICIENT_DATA",
    ),
    alarm("a02", "2026-11-01T11:00:00Z", ours(T1, "cpu"), "cpu", T1, "OK", "INSUFFICIENT_DATA"),
    alarm("a03", "2026-11-01T11:00:00Z", ours(P1, "accelerator"), "gpu", P1, "ALARM", "OK"),
    alarm("a04", "2026-11-01T11:30:00Z", ours(P1, "cpu"), "cpu", P1, "ALARM", "OK"),
    # Someone else's alarms on the same metrics of T1 (a "GPU > 90 %" or "CPU > 80 %" alarm
    # in ALARM means busy): never the tracker's word on idleness, ignored.
    alarm("a03x", "2026-11-01T11:05:00Z", "team-nlp-neuron-quiet", "neuron", T1, "ALARM", "OK"),
    alarm("a04x", "2026-11-01T11:06:00Z", "ServerCpuTooHigh", "cpu", T1, "ALARM", "OK"),
    alarm("a05", "2026-11-01T11:40:00Z", "p1-network", "net", P1, "ALARM", "OK"),  # ignored
    alarm("a06", "2026-11-01T11:45:00Z", "ghost-gpu", "gpu", GHOST, "ALARM", "OK"),  # ignored
    alarm("a07", "2026-11-01T12:00:00Z", ours(T1, "accelerator"), "neuron", T1, "ALARM", "OK"),
    alarm("a08", "2026-11-01T12:20:00Z", ours(T1, "cpu"), "cpu", T1, "ALARM", "OK"),
    alarm("a09", "2026-11-01T13:10:00Z", ours(T1, "accelerator"), "neuron", T1, "OK", "ALARM"),
    alarm(
        "a10",
        "2026-11-01T14:00:00Z",
        ours(T1, "accelerator"),
        "neuron",
        T1,
        "INSUFFICIENT_DATA",
        "OK",
    ),
    alarm(
        "a11",
        "2026-11-01T14:30:00Z",
        ours(T1, "accelerator"),
        "neuron",
        T1,
        "ALARM",
        "INSUFFICIENT_DATA",
    ),
    state("s3", "2026-11-01T16:00:00Z", T1, "stopped"),
]
scenario = {
    "region": REGION,
    "account": ACCOUNT,
    "prices": {"ec2": {"trn1.32xlarge": "21.50", "p5.48xlarge": "55.04"}},
    "utilization": {
        "neuron": {
            "namespace": "NeuronMonitor",
            "metric": "neuroncore_utilization",
            "dimension": "InstanceId",
        },
        "gpu": {
            "namespace": "CWAgent",
            "metric": "nvidia_smi_utilization_gpu",
            "dimension": "InstanceId",
        },
    },
    "instances": [
        {
            "instance_id": T1,
            "instance_type": "trn1.32xlarge",
            "tags": {"training-job": "llama-ft", "team": "nlp", "project": "llama"},
        },
        {
            "instance_id": P1,
            "instance_type": "p5.48xlarge",
            "tags": {"training-job": "vit-train", "team": "vision", "project": "vit"},
        },
    ],
    "events": events,
    "until": "2026-11-01T17:00:00Z",
}
(HERE / "idle_alarms.json").write_text(json.dumps(scenario, indent=1) + "\n")

# Duplicates, and events arriving up to 25 minutes after later ones (an alert's `at`
# is when it would be sent, so only a delay that keeps each alert's arrival moment
# leaves the document identical: here the late events carry no new alert condition).
# No alarm of the tracker's arrives before the `running` its alarms were put for: the
# tracker puts them on that event (tests/integration/test_replay_idle.py delivers it to
# the alarm lifecycle alone first, and to the ledger after the alarms).
rng = random.Random(5)
shuffled = list(events)
for eid in ("a02", "a03"):
    moved = next(e for e in shuffled if e["id"] == eid)
    shuffled.remove(moved)
    shuffled.insert(shuffled.index(next(e for e in shuffled if e["id"] == "a04")) + 1, moved)
shuffled += [rng.choice(events) for _ in range(6)]
(HERE / "idle_alarms_shuffled.json").write_text(
    json.dumps({**scenario, "events": shuffled}, indent=1) + "\n"
)
