"""Writes spot_checkpoints.json and its shuffled, duplicated twin (rerun to regenerate)."""

import json
import random
import zlib
from pathlib import Path

from costtracker.fakes.scenario_events import (
    ACCOUNT,
    REGION,
    ec2_state_event,
    rebalance_event,
    s3_object_event,
    spot_warning_event,
)

HERE = Path(__file__).parent
BUCKET = "ckpt-bucket"
GIB10 = 10 * 2**30


def state(eid: str, at: str, iid: str, st: str) -> dict:
    return ec2_state_event(eid, iid, st, at)


def sequencer(eid: str) -> str:
    return f"00{zlib.crc32(eid.encode()):08X}"


def created(eid: str, at: str, key: str, size: object = GIB10, seq: str = "") -> dict:
    etag = "d41d8cd98f00b204e9800998ecf8427e"
    sized = {} if size is None else {"size": size}
    return s3_object_event(
        eid, BUCKET, key, at, etag=etag, sequencer=seq or sequencer(eid), **sized
    )


def deleted(eid: str, at: str, key: str) -> dict:
    return s3_object_event(eid, BUCKET, key, at, deleted=True, sequencer=sequencer(eid))


S1, S2, S3, S4 = (
    "i-05a000000000000a1",
    "i-05a000000000000a2",
    "i-05a000000000000a3",
    "i-05a000000000000a4",
)
events = [
    state("st-01", "2026-11-01T00:00:00Z", S1, "running"),
    state("st-02", "2026-11-01T00:00:30Z", S2, "running"),
]
for step, hhmm in [(500, "00:30"), (1000, "01:00"), (1500, "01:30")]:
    for shard, sec in ((0, "00"), (1, "20")):
        events.append(
            created(
                f"ck-{step}-{shard}",
                f"2026-11-01T{hhmm}:{sec}Z",
                f"runs/gpt-spot/step-{step}/shard-{shard}.pt",
            )
        )
events += [
    rebalance_event("rb-01", S1, "2026-11-01T01:45:00Z"),
    spot_warning_event("itn-01", S1, "2026-11-01T01:50:00Z"),
    state("st-03", "2026-11-01T01:52:00Z", S1, "shutting-down"),
    state("st-04", "2026-11-01T01:52:30Z", S1, "terminated"),
    state("st-05", "2026-11-01T01:53:00Z", S2, "shutting-down"),
    state("st-06", "2026-11-01T01:53:40Z", S2, "terminated"),
    state("st-07", "2026-11-01T02:10:00Z", S3, "running"),
    state("st-08", "2026-11-01T02:10:10Z", S4, "running"),
    created("ck-2000-0", "2026-11-01T02:40:00Z", "runs/gpt-spot/step-2000/shard-0.pt"),
    # URL-encoded key, as S3 sends it: "runs/gpt-spot/step-2000/shard 1.pt"
    created("ck-2000-1", "2026-11-01T02:40:20Z", "runs/gpt-spot/step-2000/shard+1.pt"),
    deleted("dl-500-0", "2026-11-01T02:45:00Z", "runs/gpt-spot/step-500/shard-0.pt"),
    deleted("dl-500-1", "2026-11-01T02:45:00Z", "runs/gpt-spot/step-500/shard-1.pt"),
    # Bad inputs: a key naming no job, a deletion never written, negative and missing sizes.
    created("ck-notes", "2026-11-01T02:46:00Z", "runs/notes.txt", size=120),
    deleted("dl-ghost", "2026-11-01T02:47:00Z", "runs/gpt-spot/step-100/shard-9.pt"),
    created("ck-neg", "2026-11-01T02:48:00Z", "runs/gpt-spot/step-2100/shard-0.pt", size=-5),
    created("ck-nosize", "2026-11-01T02:49:00Z", "runs/gpt-spot/step-2100/shard-1.pt", size=None),
    # Another bucket's object: not a checkpoint bucket, so the rule does not deliver it.
    {
        **created("ck-other", "2026-11-01T02:50:00Z", "runs/gpt-spot/step-1/x.pt"),
        "detail": {
            "version": "0",
            "bucket": {"name": "other-bucket"},
            "object": {"key": "runs/gpt-spot/step-1/x.pt", "size": 1, "sequencer": "01"},
        },
    },
]
events.sort(key=lambda e: e["time"])
spot_tags = {
    "training-job": "gpt-spot",
    "project": "gpt",
    "team": "research",
    "tokens-per-step": "524288",
}
scenario = {
    "region": REGION,
    "account": ACCOUNT,
    "prices": {"spot": {"p5.48xlarge": "20.00"}, "s3_gb_month": "0.023"},
    "checkpoint": {"buckets": [BUCKET], "key_pattern": "^runs/(?P<job>[^/]+)/step-(?P<step>\\d+)/"},
    "instances": [
        {
            "instance_id": iid,
            "instance_type": "p5.48xlarge",
            "lifecycle": "spot",
            "platform": "Linux/UNIX",
            "tags": spot_tags,
            "volumes": [],
        }
        for iid in (S1, S2, S3, S4)
    ],
    "events": events,
    "until": "2026-11-01T03:00:00Z",
}
(HERE / "spot_checkpoints.json").write_text(json.dumps(scenario, indent=1) + "\n")

rng = random.Random(11)
noisy = events + [rng.choice(events) for _ in range(10)]
keyed = [(i + rng.uniform(-5, 5), e) for i, e in enumerate(noisy)]
shuffled = [e for _, e in sorted(keyed, key=lambda p: p[0])]
(HERE / "spot_checkpoints_shuffled.json").write_text(
    json.dumps({**scenario, "events": shuffled}, indent=1) + "\n"
)
