"""The scenario's CloudWatch alarm state changes, apart from its instances, checkpoints
and spot notices (``bench.scenario``): they are drawn afterwards, from the instances'
runs, on a random stream of their own, so that adding or changing them leaves every
other event of a seed as it was."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta
from typing import Any

from bench.events import STATE, Ids, iso
from costtracker.fakes.scenario_events import alarm_state_event


def _alarm(
    eid: str, at: datetime, name: str, iid: str, value: str, previous: str
) -> dict[str, Any]:
    # The threshold CloudWatch compared (the tracker's defaults).
    compared = json.dumps(
        {"threshold": 10.0 if name.endswith("-cpu-low") else 5.0}, separators=(",", ":")
    )
    return alarm_state_event(
        eid,
        name,
        value,
        iso(at),
        metric=("AWS/EC2", "CPUUtilization"),
        instance_id=iid,
        previous=previous,
        previous_fields=("reason",),
        state_reason_data=compared,
    )


def alarm_events(
    specs: list[dict[str, Any]],
    timed: list[tuple[datetime, int, dict[str, Any]]],
    seed: int,
    end: datetime,
) -> None:
    """CloudWatch alarm state changes (a random stream of their own, so that every other
    event stays as it was): for one run in five of a tagged instance, the tracker's CPU
    alarm goes to ALARM an hour in and back to OK an hour later; now and then someone
    else's alarm on the same metric (ignored by the tracker)."""
    rng = random.Random(seed ^ 0xA1A4)
    ids = Ids(rng)
    runs: dict[str, list[datetime]] = {}
    stops: dict[str, list[datetime]] = {}
    for at, _, event in timed:
        detail = event["detail"]
        if event["detail-type"] == STATE and detail["state"] == "running":
            runs.setdefault(detail["instance-id"], []).append(at)
        elif event["detail-type"] == STATE and detail["state"] in ("stopping", "shutting-down"):
            stops.setdefault(detail["instance-id"], []).append(at)
    seq = len(timed)
    for spec in specs:
        if not spec["tags"]:
            continue
        iid = spec["instance_id"]
        ends = sorted(stops.get(iid, []))
        for start in sorted(runs.get(iid, [])):
            stop = next((s for s in ends if s > start), end)
            if rng.random() >= 0.2 or start + timedelta(hours=2) >= stop:
                continue
            name = f"costtracker-{iid}-cpu-low"
            for at, value, previous in (
                (start + timedelta(hours=1), "ALARM", "OK"),
                (start + timedelta(hours=2), "OK", "ALARM"),
            ):
                seq += 1
                timed.append((at, seq, _alarm(ids.event(), at, name, iid, value, previous)))
            if rng.random() < 0.2:
                at = start + timedelta(minutes=90)
                seq += 1
                timed.append(
                    (at, seq, _alarm(ids.event(), at, "team-cpu-high", iid, "ALARM", "OK"))
                )
