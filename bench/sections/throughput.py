"""Section 3 of the table: replay rate against the bare-UpdateItem floor, deliver()
latency, CPU per event on the twins, and where the time goes (emulator time by
operation, the cProfile summary)."""

from __future__ import annotations

import statistics
from typing import Any

from bench.report import WIDTH, Report, median_or_zero


def section_throughput(
    r: Report,
    replay: dict[str, Any],
    floor: dict[str, Any],
    cpu: dict[str, Any],
    quick: bool,
    profile: dict[str, Any] | None,
) -> dict[str, Any]:
    s = "3. Replay throughput"
    r.section(
        f"{s} ({replay['instances']} instances, {replay['events']:,} events"
        f"{', --quick' if quick else ''})"
    )
    r.header()
    # The counting hooks and the counting table's sizing run inside the replay: left out.
    replay_s = replay["replay_s"] - replay["hooks_s"]
    rate = replay["events"] / replay_s
    r.figure(s, "replay wall time (hooks excluded)", replay_s, "s")
    r.figure(s, "counting hooks' time (excluded)", replay["hooks_s"], "s")
    r.figure(s, "bench bookkeeping per invocation (excluded)", replay["bookkeeping_s"], "s")
    r.figure(s, "replay rate", rate, "events/s")
    per = sorted(replay["per_event_s"])
    r.figure(s, "deliver() latency, median", median_or_zero(per) * 1000, "ms")
    r.figure(s, "deliver() latency, p90", per[int(len(per) * 0.9)] * 1000 if per else 0, "ms")
    raw = replay["per_event_s"]
    tenth = max(1, len(raw) // 10)
    r.figure(s, "deliver() median, first 10 % of events", median_or_zero(raw[:tenth]) * 1000, "ms")
    r.figure(s, "deliver() median, last 10 % of events", median_or_zero(raw[-tenth:]) * 1000, "ms")
    r.figure(s, f"floor: bare UpdateItem rate ({floor['blocks']} blocks)", floor["rate"], "calls/s")
    if floor["block_rates"]:
        low, high = min(floor["block_rates"]), max(floor["block_rates"])
        r.figure(s, "floor: slowest / fastest block", low / high, "x")
    r.figure(s, "floor: UpdateItem latency, median", floor["median_call_ms"], "ms")
    ratio = rate / floor["rate"] if floor["rate"] else 0.0
    r.figure(s, "replay rate / floor rate", ratio, "x", ">= 2x", ratio >= 2.0)
    replayed = [x for x in replay["invocations"] if not x["category"].startswith("GET")]
    r.figure(
        s,
        "AWS calls per input event (replay, mean)",
        sum(x["total"] for x in replayed) / replay["events"],
        "calls",
    )
    r.figure(
        s,
        "invocations per input event (replay, mean)",
        len(replayed) / replay["events"],
        "invocations",
    )
    for name, values in sorted(cpu["service_us"].items()):
        if not values:
            continue
        r.figure(
            s,
            f"CPU, {name} service on twins, median",
            median_or_zero(values),
            "us/event",
            fmt=",.0f",
        )
        r.figure(
            s,
            f"CPU, {name} service on twins, mean",
            statistics.mean(values) if values else 0,
            "us/event",
            fmt=",.0f",
        )
    for name, values in sorted(cpu["handler_us"].items()):
        r.figure(
            s, f"CPU, whole {name} handler, median", median_or_zero(values), "us/event", fmt=",.0f"
        )
    for name, error in cpu.get("failed_invocations", {}).items():
        r.out(f"  {name} on twins failed: {error}"[:WIDTH])
    r.figure(
        s, "handler log output per invocation", cpu["log_bytes_per_invocation"], "bytes", fmt=",.0f"
    )
    ops = replay.get("server_ops", [])
    if ops:
        total = sum(o["total_s"] for o in ops)
        r.out()
        r.out(
            f"AWS call round trips during the replay (client side, botocore hooks): {total:.1f} s"
            f" of {replay['replay_s']:.1f} s; by operation:"
        )
        for o in ops[:8]:
            r.out(
                f"  {o['operation']:<34}{o['calls']:>7} calls {o['total_s']:>8.1f} s"
                f" {o['mean_ms']:>8.1f} ms/call"
            )
    if profile is not None:
        r.out()
        r.out(
            f"where the time goes (cProfile, {profile['events']:,} events, "
            f"{profile['wall_s']:.1f} s wall; own time by area, s):"
        )
        areas = ", ".join(
            f"{k} {v:.1f}" for k, v in list(profile["client"]["by_area_s"].items())[:8]
        )
        r.out(f"  replay thread: {areas}"[:WIDTH])
        r.out("  the emulator's own side: not profiled (it would mean patching moto)")
        for side in ("client",):
            r.out("  top own time, replay thread:")
            for row in profile[side]["top_tottime"][:8]:
                r.out(
                    f"    {row['tottime_s']:>7.2f} s {row['calls']:>8} x {row['function']}"[:WIDTH]
                )
        r.out("  top cumulative, replay thread (core and handlers):")
        for row in profile["client"]["top_cumtime_core"][:12]:
            r.out(f"    {row['cumtime_s']:>7.2f} s {row['calls']:>8} x {row['function']}"[:WIDTH])
    return {"replay_rate": rate, "ratio": ratio}
