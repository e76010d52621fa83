"""``python -m bench [--quick] [--skip-layer]``: the benchmark table and bench/results.json."""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.report import WIDTH, Report, median_or_zero
from bench.sections.bundle import section_bundle
from bench.sections.calls import section_calls
from bench.sections.cold import section_cold
from bench.sections.cost import section_cost
from bench.sections.latency import section_latency
from bench.sections.reads import section_reads
from bench.sections.throughput import section_throughput

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="10 instances over 1 day")
    parser.add_argument("--skip-layer", action="store_true", help="do not pip-build the layer")
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument("--output", type=Path, default=HERE / "results.json")
    parser.add_argument(
        "--cold-only", action="store_true", help="only section 4 (cold start), in a few minutes"
    )
    args = parser.parse_args(argv)
    if args.cold_only:
        return cold_only(args.output)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)

    from bench import (
        budget_latency,
        bundle,
        coldstart,
        cost_model,
        profiling,
        reads,
        records,
        replay_bench,
        twin_cpu,
    )
    from bench.scenario import make_scenario

    started = time.perf_counter()
    instances, days = (10, 1) if args.quick else (100, 7)
    scenario = make_scenario(instances, days, args.seed)
    r = Report()
    r.out(
        f"costtracker bench {datetime.now(UTC):%Y-%m-%dT%H:%MZ}, python "
        f"{sys.version.split()[0]}, {instances} instances / {days} days / seed "
        f"{args.seed}"
    )
    timings: dict[str, float] = {}
    errors: dict[str, str] = {}

    def attempt(name: str, fn: Any, *a: Any) -> Any:
        """Run one measurement; a failure is reported (NOT MEASURED), the others still run."""
        t = time.perf_counter()
        try:
            return fn(*a)
        except Exception as exc:
            errors[name] = f"{type(exc).__name__}: {exc}"
            print(f"{name} failed: {errors[name]}", file=sys.stderr)
            import traceback

            traceback.print_exc()
            return None
        finally:
            timings[f"{name}_s"] = time.perf_counter() - t

    # CPU on the in-memory twins first: it takes seconds, and imports the twins before
    # the long replay (the source tree may change while the benchmark runs).
    cpu = attempt("handler_cpu", twin_cpu.handler_cpu, scenario)
    growth = attempt(
        "record_growth", records.growth, (1, 10, 100) if args.quick else (1, 10, 100, 1000)
    )
    empty_cpu = {
        "service_us": {},
        "handler_us": {},
        "log_bytes_per_invocation": 0.0,
        "log_lines_per_invocation": 0.0,
        "failed_invocations": {},
    }
    every = 50 if args.quick else 500
    replay = replay_bench.run_replay(scenario, progress_every=every, floor_every=every)
    timings["replay_s"] = replay["replay_s"]
    floor = replay["floor"]
    profile_scenario = (
        make_scenario(10, 1, args.seed) if args.quick else make_scenario(20, 2, args.seed)
    )
    profile = attempt("profile", profiling.profile_replay, profile_scenario)
    read_paths = attempt("read_paths", reads.measure, (10, 100) if args.quick else (10, 1000))

    calls = section_calls(r, replay)
    reads_out = None
    if read_paths is not None:
        reads_out = section_reads(r, read_paths)
    else:
        r.section("2. Read paths at 10 and 1,000 jobs")
        r.out(f"NOT MEASURED: {errors['read_paths']}"[:WIDTH])
    throughput = section_throughput(r, replay, floor, cpu or empty_cpu, args.quick, profile)
    if cpu is None:
        r.out(f"CPU on twins NOT MEASURED: {errors['handler_cpu']}"[:WIDTH])
    if profile is None:
        r.out(f"profile NOT MEASURED: {errors['profile']}"[:WIDTH])

    cold = attempt("cold_start", coldstart.measure, 5)
    if cold is not None:
        section_cold(r, cold)
    else:
        r.section("4. Cold start")
        r.out(f"NOT MEASURED: {errors['cold_start']}"[:WIDTH])

    functions = attempt("bundle_functions", bundle.functions) or {}
    layer = None if args.skip_layer else attempt("bundle_layer", bundle.layer)
    section_bundle(r, functions, layer, bundle.pip_target_args_match())
    if "bundle_layer" in errors:
        r.out(f"layer NOT MEASURED: {errors['bundle_layer']}"[:WIDTH])

    running = max(replay["open_instances_at_end"], 1)
    alarms_per_running = replay["alarms_at_end"] / running
    model = cost_model.build(replay, cpu or empty_cpu, cold, alarms_per_running, growth)
    model["alarms_at_end_of_replay"] = replay["alarms_at_end"]
    model["open_instances_at_end_of_replay"] = replay["open_instances_at_end"]
    section_cost(r, model, growth)

    latency = attempt("budget_latency", budget_latency.measure)
    section_latency(r, latency, errors.get("budget_latency"))

    timings["total_s"] = time.perf_counter() - started
    r.out()
    r.out("timings: " + ", ".join(f"{k} {v:.0f} s" for k, v in timings.items()))
    missed = [f for f in r.figures if f["met"] is False]
    unmeasured = [f for f in r.figures if f["value"] is None and f["target"]]
    r.out(
        f"targets: {sum(1 for f in r.figures if f['met'])} met, {len(missed)} missed,"
        f" {len(unmeasured)} not measured; measurements failed: {len(errors)}"
    )
    for f in missed:
        r.out(f"  missed: {f['name']} = {f['value']:.3g} {f['unit']} (target {f['target']})")
    for name, error in errors.items():
        r.out(f"  failed: {name}: {error}"[:WIDTH])
    results = {
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "mode": "quick" if args.quick else "full",
        "scenario": {
            "instances": instances,
            "days": days,
            "seed": args.seed,
            "events": replay["events"],
            "event_kinds": replay_bench.event_kinds(scenario),
        },
        "errors": errors,
        "budget_latency": latency,
        "api_error": replay.get("api_error"),
        "figures": r.figures,
        "calls_per_operation": calls,
        "read_paths": {"summary": reads_out, "raw": read_paths},
        "throughput": {
            **throughput,
            "replay_s": replay["replay_s"],
            "hooks_s": replay["hooks_s"],
            "bookkeeping_s": replay["bookkeeping_s"],
            "floor": floor,
            "rejected_events": replay["rejected"][:50],
        },
        "profile": profile,
        "cpu": None
        if cpu is None
        else {
            "service_us_median": {k: median_or_zero(v) for k, v in cpu["service_us"].items()},
            "handler_us_median": {k: median_or_zero(v) for k, v in cpu["handler_us"].items()},
            "log_bytes_per_invocation": cpu["log_bytes_per_invocation"],
            "failed_invocations": cpu["failed_invocations"],
        },
        "record_growth": growth,
        "stored_items_by_kind": _by_kind(replay["stored_items"]),
        "cold_start": cold,
        "bundle": {"functions": functions, "layer": layer, "skipped_layer": layer is None},
        "cost_model": model,
        "timings_s": timings,
        "table": r.lines,
    }
    args.output.write_text(json.dumps(results, indent=1, default=str) + "\n")
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


def cold_only(output: Path) -> int:
    """Section 4 alone (boto3 and every handler in the same run), to its own file."""
    from bench import coldstart

    r = Report()
    r.out(f"costtracker bench --cold-only {datetime.now(UTC):%Y-%m-%dT%H:%MZ}")
    cold = coldstart.measure(5)
    section_cold(r, cold)
    path = output.with_name("results-cold.json") if output == HERE / "results.json" else output
    results = {
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "mode": "cold-only",
        "figures": r.figures,
        "cold_start": cold,
        "table": r.lines,
    }
    path.write_text(json.dumps(results, indent=1, default=str) + "\n")
    print(f"wrote {path}", file=sys.stderr)
    return 0


def _by_kind(stored: list[Any]) -> dict[str, dict[str, float]]:
    by: dict[str, list[int]] = defaultdict(list)
    for item in stored:
        by[item.kind].append(item.size)
    return {
        k: {"n": len(v), "mean_bytes": statistics.mean(v), "max_bytes": max(v)}
        for k, v in sorted(by.items())
    }


if __name__ == "__main__":
    raise SystemExit(main())
