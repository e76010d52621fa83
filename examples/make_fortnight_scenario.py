"""Writes costtracker/examples/two-teams-fortnight.json (package data): two teams over two
weeks and a morning, made for the dashboard (rerun to regenerate). Times are UTC; all
prices are overrides.

- nlp, llama-sft (1 x trn1.32xlarge, $21.50/h): week 1 (Nov 2-8) 09:00-17:00 daily (56 h),
  week 2 (Nov 9-15) 08:00-20:00 daily (84 h); Nov 12 it runs idle from 08:30 (both alarms
  low; 11.5 h wasted). A checkpoint every 2 h of work, 1,000 steps/h.
- nlp, llama-sft-gpu (1 x p5.48xlarge on-demand, $55.04/h): Nov 10 08:00-18:00, the same
  work at 2,500 steps/h (Trainium vs GPU).
- nlp, llama-pretrain (2 x trn1.32xlarge): running since Nov 16 00:00; last checkpoint
  10:00; the second node idle since 10:30.
- vision, vit-spot (p5.48xlarge spot, $20/h): Nov 9 00:00 to Nov 11 12:00 on two
  instances; interrupted Nov 10 07:50 (last checkpoint 06:00).
- vision, vit-eval (g5.12xlarge, $5.672/h): running since Nov 16 06:00, no checkpoint.
- an untagged g5.xlarge ($1.006/h), Nov 14 10:00 to Nov 15 10:00; a data-prep job
  without team and owner tags (m5.large, $0.096/h), Nov 3 10:00-14:00.
- budgets (two-teams-fortnight.budgets.json): nlp $6,000 a month, vision $1,500 a month,
  the account $10,000 in total.
"""

import json
from datetime import UTC, datetime
from pathlib import Path

from costtracker.fakes.scenario_events import (
    ACCOUNT,
    REGION,
    alarm_state_event,
    ec2_state_event,
    rebalance_event,
    s3_object_event,
    spot_warning_event,
)

BUCKET = "ml-checkpoints"
GIB = 2**30
METRICS = {
    "accelerator-neuron": ("NeuronMonitor", "neuroncore_utilization"),
    "accelerator-gpu": ("CWAgent", "nvidia_smi_utilization_gpu"),
    "cpu": ("AWS/EC2", "CPUUtilization"),
}
events: list[dict] = []
counter = {"n": 0}


def at(day: int, hh: int, mm: int = 0, ss: int = 0) -> str:
    return datetime(2026, 11, day, hh, mm, ss, tzinfo=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def eid(prefix: str) -> str:
    counter["n"] += 1
    return f"{prefix}-{counter['n']:04d}"


def state(when: str, iid: str, st: str) -> None:
    events.append(ec2_state_event(eid("st"), iid, st, when))


def alarm(when: str, iid: str, signal: str, value: str, prev: str) -> None:
    short = "accelerator" if signal.startswith("accelerator") else "cpu"
    name = f"costtracker-{iid}-{short}-low"
    # What CloudWatch says it compared: the tracker's default thresholds.
    event = alarm_state_event(
        eid("al"), name, value, when, metric=METRICS[signal], instance_id=iid, previous=prev
    )
    events.append(event)


def checkpoint(when: str, job: str, step: int, size_gib: int) -> None:
    key = f"runs/{job}/step-{step}/model.pt"
    sequencer = f"{counter['n']:016X}"  # before this event's id is drawn
    events.append(
        s3_object_event(
            eid("ck"), BUCKET, key, when, size=size_gib * GIB, etag="0" * 32, sequencer=sequencer
        )
    )


def delete(when: str, job: str, step: int) -> None:
    key = f"runs/{job}/step-{step}/model.pt"
    sequencer = f"{counter['n']:016X}"  # before this event's id is drawn
    events.append(s3_object_event(eid("dl"), BUCKET, key, when, deleted=True, sequencer=sequencer))


T1, G1 = "i-0a100000000000a01", "i-0a200000000000a02"
P1, P2 = "i-0b100000000000b01", "i-0b200000000000b02"
PT1, PT2 = "i-0c100000000000c01", "i-0c200000000000c02"
EV, UT, PREP = "i-0d100000000000d01", "i-0e100000000000e01", "i-0f100000000000f01"

# llama-sft on Trainium: the two weeks, one idle day, checkpoints every 2 h of work.
step, kept = 0, []
for day in range(2, 16):
    start, stop = (9, 17) if day <= 8 else (8, 20)
    state(at(day, start), T1, "running")
    if day == 12:  # the idle day: both alarms low from 08:30 until it stops
        alarm(at(day, 8, 30), T1, "accelerator-neuron", "ALARM", "OK")
        alarm(at(day, 8, 30), T1, "cpu", "ALARM", "OK")
        alarm(at(day, stop), T1, "accelerator-neuron", "OK", "ALARM")
        alarm(at(day, stop), T1, "cpu", "OK", "ALARM")
    else:
        for hh in range(start + 2, stop + 1, 2):
            step += 2000
            checkpoint(at(day, hh), "llama-sft", step, 16)
            kept.append(step)
            if len(kept) > 3:
                delete(at(day, hh, 1), "llama-sft", kept.pop(0))
    state(at(day, stop), T1, "stopped")

# The same work on a GPU for a day: 2,500 steps/h.
state(at(10, 8), G1, "running")
for n, hh in enumerate(range(10, 19, 2), 1):
    checkpoint(at(10, hh), "llama-sft-gpu", 5000 * n, 16)
state(at(10, 18), G1, "stopped")
state(at(10, 18, 1), G1, "terminated")

# vit-spot: interrupted once, resumed on a second spot instance.
state(at(9, 0), P1, "running")
for n, hh in enumerate((3, 6), 1):
    checkpoint(at(9, hh), "vit-spot", 1500 * n, 40)
for n, (day, hh) in enumerate(
    [(9, 9), (9, 12), (9, 15), (9, 18), (9, 21), (10, 0), (10, 3), (10, 6)], 3
):
    checkpoint(at(day, hh), "vit-spot", 1500 * n, 40)
events.append(rebalance_event(eid("rb"), P1, at(10, 7, 30)))
events.append(spot_warning_event(eid("itn"), P1, at(10, 7, 50)))
state(at(10, 7, 52), P1, "shutting-down")
state(at(10, 7, 52, 30), P1, "terminated")
state(at(10, 8, 10), P2, "running")
for n, (day, hh) in enumerate(
    [(10, 11), (10, 14), (10, 17), (10, 20), (10, 23), (11, 2), (11, 5), (11, 8), (11, 11)], 11
):
    checkpoint(at(day, hh), "vit-spot", 1500 * n, 40)
state(at(11, 12), P2, "shutting-down")
state(at(11, 12, 0, 40), P2, "terminated")

# Other spend: an untagged GPU, a data-prep job missing its team and owner tags.
state(at(3, 10), PREP, "running")
state(at(3, 14), PREP, "stopped")
state(at(14, 10), UT, "running")
state(at(15, 10), UT, "stopped")

# Now (Nov 16): a 2-node pretraining run, one node idle; an eval job with no checkpoint.
state(at(16, 0), PT1, "running")
state(at(16, 0, 0, 20), PT2, "running")
for iid in (PT1, PT2):
    alarm(at(16, 0, 30), iid, "accelerator-neuron", "OK", "INSUFFICIENT_DATA")
    alarm(at(16, 0, 30), iid, "cpu", "OK", "INSUFFICIENT_DATA")
for n, hh in enumerate((2, 4, 6, 8, 10), 1):
    checkpoint(at(16, hh), "llama-pretrain", 4000 * n, 64)
alarm(at(16, 10, 30), PT2, "accelerator-neuron", "ALARM", "OK")
alarm(at(16, 10, 30), PT2, "cpu", "ALARM", "OK")
state(at(16, 6), EV, "running")

events.sort(key=lambda e: e["time"])
nlp = {"project": "llama", "team": "nlp", "cost-center": "cc-4410"}
vision = {"project": "vit", "team": "vision", "cost-center": "cc-5120"}
tokens = {"tokens-per-step": "262144"}


def instance(iid: str, itype: str, tags: dict, gib: int, lifecycle: str = "on-demand") -> dict:
    volumes = [{"size_gib": gib, "volume_type": "gp3"}] if gib else []
    return {
        "instance_id": iid,
        "instance_type": itype,
        "lifecycle": lifecycle,
        "tags": tags,
        "volumes": volumes,
    }


scenario = {
    "region": REGION,
    "account": ACCOUNT,
    "prices": {
        "ec2": {
            "trn1.32xlarge": "21.50",
            "p5.48xlarge": "55.04",
            "g5.12xlarge": "5.672",
            "g5.xlarge": "1.006",
            "m5.large": "0.096",
        },
        "spot": {"p5.48xlarge": "20.00"},
        "s3_gb_month": "0.023",
    },
    "checkpoint": {"buckets": [BUCKET]},
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
        instance(
            T1, "trn1.32xlarge", {"training-job": "llama-sft", "owner": "ana", **nlp, **tokens}, 512
        ),
        instance(
            G1,
            "p5.48xlarge",
            {"training-job": "llama-sft-gpu", "owner": "ben", **nlp, **tokens},
            512,
        ),
        instance(
            PT1,
            "trn1.32xlarge",
            {"training-job": "llama-pretrain", "owner": "ana", **nlp, **tokens},
            1024,
        ),
        instance(
            PT2,
            "trn1.32xlarge",
            {"training-job": "llama-pretrain", "owner": "ana", **nlp, **tokens},
            1024,
        ),
        instance(
            P1, "p5.48xlarge", {"training-job": "vit-spot", "owner": "cho", **vision}, 2048, "spot"
        ),
        instance(
            P2, "p5.48xlarge", {"training-job": "vit-spot", "owner": "cho", **vision}, 2048, "spot"
        ),
        instance(EV, "g5.12xlarge", {"training-job": "vit-eval", "owner": "dev", **vision}, 256),
        instance(UT, "g5.xlarge", {}, 100),
        instance(PREP, "m5.large", {"training-job": "data-prep", "project": "llama"}, 0),
    ],
    "events": events,
    "until": at(16, 12),
}
# Budgets go in through the API after the replay (`costtracker demo --budgets`): a budget
# in the scenario makes the replay evaluate it after every event (minutes, not seconds).
budgets = [
    {
        "budget_id": "nlp-monthly",
        "scope": {"tag": {"team": "nlp"}},
        "amount_usd": "6000",
        "period": "month",
        "thresholds": [50, 80, 100],
    },
    {
        "budget_id": "vision-monthly",
        "scope": {"tag": {"team": "vision"}},
        "amount_usd": "1500",
        "period": "month",
        "thresholds": [50, 80, 100],
    },
    {
        "budget_id": "account-total",
        "scope": {"account": True},
        "amount_usd": "10000",
        "period": "total",
        "thresholds": [50, 80, 100],
    },
]
HERE = Path(__file__).parent.parent / "costtracker" / "examples"
(HERE / "two-teams-fortnight.json").write_text(json.dumps(scenario, indent=1) + "\n")
(HERE / "two-teams-fortnight.budgets.json").write_text(json.dumps(budgets, indent=1) + "\n")
