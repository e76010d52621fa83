"""A deterministic, seeded replay scenario for the benchmarks.

``make_scenario(100, 7)`` gives ~10k input events: trn1.32xlarge, p5.48xlarge
(spot and on-demand), g5 and a few untagged instances (untagged g5: tracked as
``untagged:<id>``; untagged m5: ignored) in start/stop cycles, spot interruption
warnings and rebalance recommendations, S3 checkpoint objects written every few
hours of running (some deleted later, a few naming no job), ~3 % duplicates and
~2 % late arrivals. Every tracked type has a price in ``prices``. The events come from
the one builder (``costtracker.fakes.scenario_events``); the CloudWatch alarm state
changes, drawn afterwards on a stream of their own, ``bench.alarm_events``.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.alarm_events import alarm_events
from bench.events import ACCOUNT, REGION, Ids, iso
from costtracker.fakes.scenario_events import (
    ec2_state_event,
    instance_arn,
    rebalance_event,
    s3_object_event,
    spot_warning_event,
)

BUCKET = "bench-checkpoints"
START = datetime(2026, 11, 2, tzinfo=UTC)
PRICES = {
    "ec2": {
        "trn1.32xlarge": "21.50",
        "p5.48xlarge": "98.32",
        "g5.xlarge": "1.006",
        "g5.12xlarge": "5.672",
    },
    "spot": {"p5.48xlarge": "40.00"},
    "ebs_gb_month": {"gp3": "0.08"},
    "s3_gb_month": "0.023",
}
# (instance type, lifecycle, tagged, weight, volume GiB)
MIX = (
    ("trn1.32xlarge", "on-demand", True, 40, 1024),
    ("p5.48xlarge", "spot", True, 20, 1024),
    ("p5.48xlarge", "on-demand", True, 15, 1024),
    ("g5.12xlarge", "on-demand", True, 10, 200),
    ("g5.xlarge", "on-demand", True, 7, 100),
    ("g5.xlarge", "on-demand", False, 5, 100),
    ("m5.large", "on-demand", False, 3, 0),
)
CHECKPOINT_EVERY = timedelta(hours=2)


def make_scenario(instances: int = 100, days: int = 7, seed: int = 20261202) -> dict[str, Any]:
    rng = random.Random(seed)
    ids = Ids(rng)
    end = START + timedelta(days=days)
    weights = [m[3] for m in MIX]
    specs: list[dict[str, Any]] = []
    timed: list[tuple[datetime, int, dict[str, Any]]] = []  # (time, tiebreak, event)
    seq = 0

    def add(at: datetime, event: dict[str, Any]) -> None:
        nonlocal seq
        seq += 1
        timed.append((at, seq, event))

    # Jobs of 1-8 instances of one kind.
    n = 0
    job_no = 0
    while n < instances:
        itype, lifecycle, tagged, _, vol = rng.choices(MIX, weights)[0]
        size = 1 if not tagged else min(rng.choice((1, 2, 2, 4, 4, 8)), instances - n)
        job_no += 1
        job = f"job-{job_no:03d}-{itype.split('.')[0]}"
        tags = (
            {
                "training-job": job,
                "project": rng.choice(("llama", "gpt", "vision")),
                "team": rng.choice(("nlp", "vision", "research")),
                "owner": f"user{job_no % 7}",
            }
            if tagged
            else {}
        )
        job_start = START + timedelta(minutes=rng.randrange(0, 6 * 60))
        for _ in range(size):
            n += 1
            iid = f"i-0{n:016x}"
            arn = [instance_arn(iid)]
            specs.append(
                {
                    "instance_id": iid,
                    "instance_type": itype,
                    "lifecycle": lifecycle,
                    "platform": "Linux/UNIX",
                    "availability_zone": f"{REGION}a",
                    "tags": tags,
                    "volumes": (
                        [{"volume_id": f"vol-{n:08x}", "size_gib": vol, "volume_type": "gp3"}]
                        if vol
                        else []
                    ),
                }
            )
            t = job_start + timedelta(seconds=rng.randrange(0, 300))
            while t < end:
                add(
                    t - timedelta(seconds=15),
                    ec2_state_event(
                        ids.event(), iid, "pending", t - timedelta(seconds=15), resources=arn
                    ),
                )
                add(
                    t,
                    ec2_state_event(ids.event(), iid, "running", t, resources=arn),
                )
                stop = t + timedelta(minutes=rng.randrange(60, 16 * 60))
                if tagged:
                    ck = t + CHECKPOINT_EVERY
                    while ck < min(stop, end):
                        step = int((ck - START).total_seconds() // 60)
                        key = f"runs/{job}/step-{step}/shard-{iid}.pt"
                        size_b = rng.randrange(2, 20) * 2**30
                        add(
                            ck,
                            s3_object_event(
                                ids.event(),
                                BUCKET,
                                key,
                                ck,
                                size=size_b,
                                etag="e",
                                sequencer=f"{rng.getrandbits(64):016X}",
                            ),
                        )
                        gone = ck + timedelta(hours=6)
                        if rng.random() < 0.3 and gone < end:
                            add(
                                gone,
                                s3_object_event(
                                    ids.event(),
                                    BUCKET,
                                    key,
                                    gone,
                                    deleted=True,
                                    sequencer=f"{rng.getrandbits(64):016X}",
                                ),
                            )
                        if rng.random() < 0.003:
                            add(
                                ck,
                                s3_object_event(
                                    ids.event(),
                                    BUCKET,
                                    f"runs/notes-{seq}.txt",
                                    ck,
                                    size=120,
                                    etag="e",
                                    sequencer="01",
                                ),
                            )
                        ck += CHECKPOINT_EVERY
                if stop >= end:
                    break  # still running at the end
                if lifecycle == "spot" and rng.random() < 0.4:
                    if rng.random() < 0.5:
                        at = stop - timedelta(minutes=10)
                        add(
                            at,
                            rebalance_event(ids.event(), iid, at, resources=arn),
                        )
                    at = stop - timedelta(minutes=2)
                    add(
                        at,
                        spot_warning_event(ids.event(), iid, at, action="stop", resources=arn),
                    )
                if rng.random() < 0.05:  # the end of this instance
                    for dt, st in ((0, "shutting-down"), (40, "terminated")):
                        at = stop + timedelta(seconds=dt)
                        add(
                            at,
                            ec2_state_event(ids.event(), iid, st, at, resources=arn),
                        )
                    break
                for dt, st in ((0, "stopping"), (50, "stopped")):
                    at = stop + timedelta(seconds=dt)
                    add(
                        at,
                        ec2_state_event(ids.event(), iid, st, at, resources=arn),
                    )
                t = stop + timedelta(minutes=rng.randrange(20, 5 * 60))

    alarm_events(specs, timed, seed, end)
    ordered = [e for _, _, e in sorted(timed, key=lambda x: (x[0], x[1]))]
    # As AWS may deliver them: ~2 % arrive late (after later events), ~3 % twice.
    arrivals: list[dict[str, Any]] = []
    held: list[tuple[int, dict[str, Any]]] = []
    for i, event in enumerate(ordered):
        if rng.random() < 0.02:
            held.append((i + rng.randrange(5, 100), event))
        else:
            arrivals.append(event)
        if rng.random() < 0.03:
            held.append((i + rng.randrange(1, 30), event))
        due = [h for h in held if h[0] <= i]
        held = [h for h in held if h[0] > i]
        arrivals.extend(e for _, e in due)
    arrivals.extend(e for _, e in held)
    return {
        "region": REGION,
        "account": ACCOUNT,
        "prices": PRICES,
        "checkpoint": {
            "buckets": [BUCKET],
            "key_pattern": r"^runs/(?P<job>[^/]+)/step-(?P<step>\d+)/",
        },
        "instances": specs,
        "budgets": [],
        "events": arrivals,
        "until": iso(end),
    }
