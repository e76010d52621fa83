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

HERE = Path(__file__).resolve().parent
WIDTH = 100
MB = 1_000_000


class Report:
    def __init__(self) -> None:
        self.figures: list[dict[str, Any]] = []
        self.lines: list[str] = []

    def out(self, line: str = "") -> None:
        self.lines.append(line)
        print(line, flush=True)

    def section(self, title: str) -> None:
        self.out()
        self.out(f"== {title} " + "=" * max(0, WIDTH - len(title) - 4))

    def figure(
        self,
        section: str,
        name: str,
        value: float | None,
        unit: str,
        target: str = "",
        met: bool | None = None,
        fmt: str = ",.2f",
    ) -> None:
        self.figures.append(
            {
                "section": section,
                "name": name,
                "value": value,
                "unit": unit,
                "target": target or None,
                "met": met,
            }
        )
        shown = "n/a" if value is None else format(value, fmt)
        status = "" if met is None else ("met" if met else "MISSED")
        if value is None and target:
            status = "NOT MEASURED"
        self.out(f"{name[:44]:<44} {shown:>14} {unit[:12]:<12} {target[:16]:<16} {status}")

    def header(self) -> None:
        self.out(f"{'figure':<44} {'value':>14} {'unit':<12} {'target':<16} status")


def _median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else 0.0


def section_calls(r: Report, replay: dict[str, Any]) -> dict[str, Any]:
    s = "1. AWS calls per operation"
    r.section(f"{s} (replay of {replay['events']:,} events; API requests after it)")
    by_cat: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for inv in replay["invocations"]:
        by_cat[inv["category"]].append(inv)
    r.out(
        f"{'operation':<28}{'n':>5}{'DDB reads':>11}{'DDB writes':>11}{'other':>9}"
        f"{'scans':>6}{'WRU':>6}{'RRU':>6}  other services"
    )
    r.out(f"{'':<28}{'':>5}{'mean/max':>11}{'mean/max':>11}{'mean/max':>9}")
    table = {}
    for cat in sorted(by_cat):
        rows = by_cat[cat]

        def mm(key: str, rows: list[dict[str, Any]] = rows) -> str:
            values = [x[key] for x in rows]
            return f"{statistics.mean(values):.2f}/{max(values)}"

        others = sorted({k for x in rows for k in x["ops"] if not k.startswith("dynamodb.")})
        table[cat] = {
            "n": len(rows),
            **{
                f"{k}_mean": statistics.mean(x[k] for x in rows)
                for k in (
                    "ddb_reads",
                    "ddb_writes",
                    "other",
                    "wru",
                    "rru",
                    "total",
                    "cpu_s",
                    "wall_s",
                )
            },
            **{
                f"{k}_max": max(x[k] for x in rows)
                for k in ("ddb_reads", "ddb_writes", "other", "total")
            },
            "scans": sum(x["scans"] for x in rows),
            "ops_total": dict(sum((_counter(x["ops"]) for x in rows), _counter({}))),
            "failed": sum(1 for x in rows if x["failed"]),
        }
        other_names = ",".join(o.split(".", 1)[1] for o in others)
        r.out(
            f"{cat[:27]:<28}{len(rows):>5}{mm('ddb_reads'):>11}{mm('ddb_writes'):>11}"
            f"{mm('other'):>9}{table[cat]['scans']:>6}"
            f"{statistics.mean(x['wru'] for x in rows):>6.1f}"
            f"{statistics.mean(x['rru'] for x in rows):>6.1f}  {other_names[:16]}"
        )
    r.out(
        "reads = GetItem+Query+BatchGetItem; writes = Put/Update/Delete/BatchWrite/TransactWrite;"
    )
    r.out("WRU/RRU: estimated on-demand units from item sizes, incl. GSI copies (see README).")
    r.out()
    r.header()
    state_rows = [x for c, rs in by_cat.items() if c.startswith("state ") for x in rs]
    worst = max((x["ddb_writes"] for x in state_rows), default=0)
    r.figure(s, "max DynamoDB writes per state event", worst, "writes", "<= 2", worst <= 2, "d")
    detail = by_cat.get("GET /jobs/{id}", [])
    lo = min((x["total"] for x in detail), default=None)
    hi = max((x["total"] for x in detail), default=None)
    r.figure(
        s,
        "min AWS calls per GET /jobs/{id}",
        lo,
        "calls",
        "1-2",
        None if lo is None else 1 <= lo <= 2,
        "d",
    )
    r.figure(
        s,
        "max AWS calls per GET /jobs/{id}",
        hi,
        "calls",
        "1-2",
        None if hi is None else 1 <= hi <= 2,
        "d",
    )
    if replay.get("api_error"):
        r.out(f"API requests NOT MEASURED: {replay['api_error']}"[:WIDTH])
    scans = sum(x["scans"] for x in replay["invocations"])
    r.figure(s, "DynamoDB Scans (all operations)", scans, "scans", "0", scans == 0, "d")
    failed = sum(1 for x in replay["invocations"] if x["failed"])
    r.figure(
        s, "invocations failed (rejected events, non-200)", failed, "invocations", "", None, "d"
    )
    return table


def _counter(d: dict[str, int]) -> Any:
    from collections import Counter

    return Counter(d)


def section_throughput(
    r: Report, replay: dict[str, Any], floor: dict[str, Any], cpu: dict[str, Any], quick: bool
) -> dict[str, Any]:
    s = "2. Replay throughput"
    r.section(
        f"{s} ({replay['instances']} instances, {replay['events']:,} events"
        f"{', --quick' if quick else ''})"
    )
    r.header()
    rate = replay["events"] / replay["replay_s"]
    r.figure(s, "replay wall time", replay["replay_s"], "s")
    r.figure(s, "replay rate", rate, "events/s")
    per = sorted(replay["per_event_s"])
    r.figure(s, "deliver() latency, median", _median(per) * 1000, "ms")
    r.figure(s, "deliver() latency, p90", per[int(len(per) * 0.9)] * 1000 if per else 0, "ms")
    raw = replay["per_event_s"]
    tenth = max(1, len(raw) // 10)
    r.figure(s, "deliver() median, first 10 % of events", _median(raw[:tenth]) * 1000, "ms")
    r.figure(s, "deliver() median, last 10 % of events", _median(raw[-tenth:]) * 1000, "ms")
    r.figure(s, "floor: bare UpdateItem rate (median block)", floor["median_rate"], "calls/s")
    r.figure(s, "floor: UpdateItem latency, median", floor["median_call_ms"], "ms")
    ratio = rate / floor["median_rate"]
    r.figure(s, "replay rate / floor rate", ratio, "x", ">= 0.5x", ratio >= 0.5)
    aws_per_event = (
        sum(x["total"] for x in replay["invocations"] if not x["category"].startswith("GET"))
        / replay["events"]
    )
    r.figure(s, "AWS calls per input event (replay, mean)", aws_per_event, "calls")
    r.figure(
        s,
        "CPU, state service on twins, median",
        _median(cpu["service_state_us"]),
        "us/event",
        fmt=",.0f",
    )
    r.figure(
        s,
        "CPU, state service on twins, mean",
        statistics.mean(cpu["service_state_us"]) if cpu["service_state_us"] else 0,
        "us/event",
        fmt=",.0f",
    )
    for name, values in sorted(cpu["handler_us"].items()):
        r.figure(s, f"CPU, whole {name} handler, median", _median(values), "us/event", fmt=",.0f")
    r.figure(
        s, "handler log output per invocation", cpu["log_bytes_per_invocation"], "bytes", fmt=",.0f"
    )
    return {"replay_rate": rate, "ratio": ratio}


def section_cold(r: Report, cold: dict[str, Any]) -> None:
    s = "3. Cold start (import in a fresh interpreter, median of 5)"
    r.section(s)
    r.header()
    base = cold["median_s"].get("boto3")
    r.figure(s, "import boto3", base * 1000 if base else None, "ms", fmt=",.0f")
    for name, value in sorted(cold["median_s"].items()):
        if name == "boto3" or not base:
            continue
        ratio = value / base
        r.figure(
            s,
            f"{name.removeprefix('functions.')} / boto3",
            ratio,
            "x",
            f"<= 1.5x ({value * 1000:.0f} ms)",
            ratio <= 1.5,
        )
    for name, err in cold["errors"].items():
        r.out(f"{name}: import failed: {err[:80]}")
    r.figure(
        s,
        "Tracer import (POWERTOOLS_TRACE_DISABLED)",
        cold["tracer_import_median_s"] * 1000,
        "ms",
        fmt=",.0f",
    )
    r.figure(
        s,
        "Tracer() instantiation (trace disabled)",
        cold["tracer_init_median_s"] * 1000,
        "ms",
        fmt=",.0f",
    )
    r.out(
        f"Tracer() instantiated in Lambda code: {cold['tracer_instantiated_in'] or 'nowhere'};"
        f" Lambda active tracing in CDK: {cold['active_tracing_in_cdk']}"
    )
    nb = cold["no_bytecode_median_s"]
    r.figure(s, "no bytecode: import boto3", nb["boto3"] * 1000, "ms", fmt=",.0f")
    r.figure(
        s,
        "no bytecode: import instance_state.handler",
        nb["functions.instance_state.handler"] * 1000,
        "ms",
        fmt=",.0f",
    )
    parts = ", ".join(f"{k} {v * 1000:.0f}" for k, v in cold["import_breakdown_s"].items())
    r.out(f"instance_state import by package (self ms): {parts}"[:WIDTH])


def section_bundle(
    r: Report, functions: dict[str, Any], layer: dict[str, Any] | None, args_match: bool | None
) -> None:
    s = "4. Bundle size (zip, deflate)"
    r.section(s)
    r.header()
    for name, f in functions.items():
        r.figure(
            s,
            f"functions/{name}/",
            f["zipped_bytes"] / 1000,
            "kB",
            "<= 10 MB",
            f["zipped_bytes"] <= 10 * MB,
            ",.1f",
        )
    if layer is None:
        r.out("layer: skipped (--skip-layer)")
        return
    r.figure(
        s,
        "layer (requirements/lambda.txt + shared/)",
        layer["zipped_bytes"] / MB,
        "MB",
        "<= 10 MB",
        layer["zipped_bytes"] <= 10 * MB,
    )
    r.figure(s, "layer unzipped", layer["unzipped_bytes"] / MB, "MB", "", None)
    biggest = max((f["zipped_bytes"] for f in functions.values()), default=0)
    total = biggest + layer["zipped_bytes"]
    r.figure(s, "largest function + layer", total / MB, "MB", "<= 10 MB", total <= 10 * MB)
    parts = ", ".join(f"{x['name']} {x['bytes'] / MB:.1f}" for x in layer["largest_unzipped"])
    r.out(f"layer's largest (unzipped MB): {parts}"[:WIDTH])
    r.out(f"pip target args equal to cdk/constructs/lambda_factory.py: {args_match}")


def section_cost(r: Report, model: dict[str, Any]) -> None:
    s = "5. Self-cost model (monthly, us-east-1 list prices, no free tier)"
    r.section(s)
    cols = [m["instances"] for m in model["models"]]
    r.out(f"{'USD per month':<28}" + "".join(f"{f'{n:,} inst.':>14}" for n in cols))
    for line in model["models"][0]["lines_usd"]:
        r.out(f"{line:<28}" + "".join(f"{m['lines_usd'][line]:>14,.4f}" for m in model["models"]))
    r.out(f"{'total':<28}" + "".join(f"{m['total_usd']:>14,.2f}" for m in model["models"]))
    r.out(
        f"{'tracked spend':<28}"
        + "".join(f"{m['tracked_spend_usd']:>14,.0f}" for m in model["models"])
    )
    r.out(f"{'invocations':<28}" + "".join(f"{m['invocations']:>14,.0f}" for m in model["models"]))
    r.out(
        f"{'WRU / RRU (millions)':<28}"
        + "".join(f"{m['wru'] / 1e6:>7.2f}/{m['rru'] / 1e6:<6.2f}" for m in model["models"])
    )
    r.out()
    r.header()
    for m in model["models"]:
        r.figure(
            s,
            f"self-cost / tracked spend, {m['instances']:,} instances",
            m["fraction_pct"],
            "%",
            "<= 0.01 %",
            m["fraction_pct"] <= 0.01,
            ",.5f",
        )
    fit = model["record_size_fit_bytes"]
    r.out(
        f"instance record: {fit['a']:.0f} B + {fit['b']:.0f} B/transition (fit); mid-month "
        f"{model['record_bytes_mid_month']:,.0f} B, month end "
        f"{model['record_bytes_month_end']:,.0f} B"
    )
    if model["days_to_400kb_at_3_transitions_per_day"]:
        r.out(
            f"a record reaches DynamoDB's 400 KB item limit after ~"
            f"{model['transitions_at_400kb_item_limit']:,.0f} transitions (~"
            f"{model['days_to_400kb_at_3_transitions_per_day']:,.0f} days at 3/day)"
        )
    r.out(f"prices: {model['prices_as_of']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="10 instances over 1 day")
    parser.add_argument("--skip-layer", action="store_true", help="do not pip-build the layer")
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument("--output", type=Path, default=HERE / "results.json")
    args = parser.parse_args(argv)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)

    from bench import budget_latency, bundle, coldstart, cost_model, replay_bench
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
            return None
        finally:
            timings[f"{name}_s"] = time.perf_counter() - t

    # CPU on the in-memory twins first: it takes seconds, and imports the twins before
    # the long replay (the source tree may change while the benchmark runs).
    cpu = attempt("handler_cpu", replay_bench.handler_cpu, scenario)
    empty_cpu = {
        "service_state_us": [],
        "handler_us": {},
        "log_bytes_per_invocation": 0.0,
        "log_lines_per_invocation": 0.0,
        "failed_invocations": 0,
    }
    block = 100 if args.quick else 300
    floor_before = replay_bench.floor_rate(block, 2)
    replay = replay_bench.run_replay(scenario, progress_every=50 if args.quick else 500)
    timings["replay_s"] = replay["replay_s"]
    floor_after = replay_bench.floor_rate(block, 2)
    rates = floor_before["block_rates"] + floor_after["block_rates"]
    floor = {
        "block_rates": rates,
        "median_rate": statistics.median(rates),
        "median_call_ms": statistics.median(
            [floor_before["median_call_ms"], floor_after["median_call_ms"]]
        ),
    }
    calls = section_calls(r, replay)
    throughput = section_throughput(r, replay, floor, cpu or empty_cpu, args.quick)
    if cpu is None:
        r.out(f"CPU on twins NOT MEASURED: {errors['handler_cpu']}"[:WIDTH])

    cold = attempt("cold_start", coldstart.measure, 5)
    if cold is not None:
        section_cold(r, cold)
    else:
        r.section("3. Cold start")
        r.out(f"NOT MEASURED: {errors['cold_start']}"[:WIDTH])

    functions = attempt("bundle_functions", bundle.functions) or {}
    layer = None if args.skip_layer else attempt("bundle_layer", bundle.layer)
    section_bundle(r, functions, layer, bundle.pip_target_args_match())
    if "bundle_layer" in errors:
        r.out(f"layer NOT MEASURED: {errors['bundle_layer']}"[:WIDTH])

    running = max(replay["open_instances_at_end"], 1)
    alarms_per_running = replay["alarms_at_end"] / running
    model = cost_model.build(replay, cpu or empty_cpu, cold, alarms_per_running)
    model["alarms_at_end_of_replay"] = replay["alarms_at_end"]
    model["open_instances_at_end_of_replay"] = replay["open_instances_at_end"]
    section_cost(r, model)

    latency = attempt("budget_latency", budget_latency.measure)
    s6 = "6. Budget alert latency (alert at - true crossing, simulated time)"
    r.section(s6)
    if latency is not None:
        for row in latency["alerts"]:
            r.out(
                f"{row['scenario']} {row['budget_id']} {row['threshold']} %: crossing "
                f"{row['crossing'][11:19]}, alert {row['at'][11:19]}, "
                f"{row['latency_s']:.0f} s"
            )
        r.figure(
            s6,
            "median alert latency",
            latency["median_latency_s"],
            "s",
            "<= 120 s",
            None if latency["median_latency_s"] is None else latency["median_latency_s"] <= 120,
            fmt=",.0f",
        )
        r.figure(
            s6,
            "max alert latency",
            latency["max_latency_s"],
            "s",
            "<= 120 s",
            None if latency["max_latency_s"] is None else latency["max_latency_s"] <= 120,
            fmt=",.0f",
        )
        r.figure(
            s6,
            "AWS calls per simulated hour (whole replay)",
            latency["aws_calls_per_simulated_hour"],
            "calls/h",
            fmt=",.1f",
        )
    else:
        r.out(f"NOT MEASURED: {errors['budget_latency']}"[:WIDTH])

    timings["total_s"] = time.perf_counter() - started
    r.out()
    r.out("timings: " + ", ".join(f"{k} {v:.0f} s" for k, v in timings.items()))
    missed = [f for f in r.figures if f["met"] is False]
    r.out(f"targets: {sum(1 for f in r.figures if f['met'])} met, {len(missed)} missed")
    for f in missed:
        r.out(f"  missed: {f['name']} = {f['value']:.3g} {f['unit']} (target {f['target']})")
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
        "throughput": {
            **throughput,
            "replay_s": replay["replay_s"],
            "floor": floor,
            "rejected_events": replay["rejected"][:50],
        },
        "cpu": None
        if cpu is None
        else {
            "service_state_us_median": _median(cpu["service_state_us"]),
            "handler_us_median": {k: _median(v) for k, v in cpu["handler_us"].items()},
            "log_bytes_per_invocation": cpu["log_bytes_per_invocation"],
            "failed_invocations": cpu["failed_invocations"],
        },
        "cold_start": cold,
        "bundle": {"functions": functions, "layer": layer, "skipped_layer": layer is None},
        "cost_model": model,
        "timings_s": timings,
        "table": r.lines,
    }
    args.output.write_text(json.dumps(results, indent=1, default=str) + "\n")
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
