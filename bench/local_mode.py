"""Local mode's replay speed against the emulator floor, and its peak memory.

``python -m bench.local_mode --instances 100 --days 7`` replays the bench scenario
(``bench.scenario``) as ``costtracker replay`` does (the ledger's table in memory, the
other services on moto) and prints one JSON line:

- ``events_per_s``: input events over the replay's wall time (the floor's blocks left out);
- ``floor_calls_per_s``: the floor, a bare loop of one UpdateItem per call on the same
  embedded emulator (a table of its own, a client of its own session), measured in blocks
  between deliveries of the same run, so a machine that slows down moves both;
- ``ratio``: the first over the second (the target: at least 2);
- ``peak_rss_mib``: the process's peak resident memory (``getrusage``'s ``ru_maxrss``),
  scenario and emulator included. Run one scenario per process: the peak is the
  process's (``--instances 1000 --days 7``: the target is 2 GiB).
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import sys
import time
from contextlib import redirect_stdout
from typing import Any

RATIO_TARGET = 2.0
PEAK_RSS_TARGET_MIB = 2048.0


def measure(
    instances: int, days: int, seed: int = 20261202, floor_every: int = 500, floor_calls: int = 50
) -> dict[str, Any]:
    """One replay of ``instances`` x ``days`` with floor blocks every ``floor_every`` events."""
    from bench.replay_bench import FloorBlocks
    from bench.scenario import make_scenario
    from costtracker.replay import replay_session
    from costtracker.scenario import Scenario

    built = time.perf_counter()
    scenario = Scenario.model_validate(make_scenario(instances, days, seed))
    build_s = time.perf_counter() - built
    n = len(scenario.events)
    with redirect_stdout(sys.stderr), replay_session(scenario) as replayer:
        floor = FloorBlocks(replayer.emulator)
        start = time.perf_counter()
        for i, event in enumerate(scenario.events, 1):
            replayer.deliver(event)
            if floor_every and (i % floor_every == 0 or i == n):
                floor.block(floor_calls)
                elapsed = time.perf_counter() - start - floor.seconds
                rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
                print(
                    f"  {i}/{n} events, {i / elapsed:.1f} events/s, floor"
                    f" {floor.rates[-1]:.1f} calls/s, peak {rss:.0f} MiB",
                    file=sys.stderr,
                    flush=True,
                )
        if scenario.until is not None:
            replayer.advance(scenario.until)
        replay_s = time.perf_counter() - start - floor.seconds
        jobs = len(replayer.scenario.instances)
    floor_rate = floor.summary()["rate"]
    rate = n / replay_s if replay_s > 0 else None
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return {
        "instances": jobs,
        "days": days,
        "events": n,
        "scenario_build_s": round(build_s, 2),
        "replay_s": round(replay_s, 2),
        "events_per_s": round(rate, 1) if rate is not None else None,
        "floor_calls": floor.summary()["calls"],
        "floor_calls_per_s": round(floor_rate, 1) if floor_rate else None,
        "ratio": round(rate / floor_rate, 2) if rate is not None and floor_rate else None,
        "ratio_target": RATIO_TARGET,
        "peak_rss_mib": round(peak_kib / 1024, 1),
        "peak_rss_target_mib": PEAK_RSS_TARGET_MIB,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.local_mode", description=__doc__)
    parser.add_argument("--instances", type=int, default=100)
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument("--floor-every", type=int, default=500, help="events between blocks")
    parser.add_argument("--floor-calls", type=int, default=50, help="UpdateItems per block")
    args = parser.parse_args(argv)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    result = measure(args.instances, args.days, args.seed, args.floor_every, args.floor_calls)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
