"""``python -m bench [--quick] [--skip-layer]``: the benchmark table and bench/results.json."""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
from collections import Counter, defaultdict
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


STATE_ROW = "state "


def _mm(rows: list[dict[str, Any]], key: str) -> str:
    values = [x[key] for x in rows]
    mean = statistics.mean(values)
    return f"{mean:.1f}/{max(values)}" if mean % 1 else f"{mean:.0f}/{max(values)}"


def section_calls(r: Report, replay: dict[str, Any]) -> dict[str, Any]:
    s = "1. AWS calls and items written per event"
    r.section(f"{s} (replay of {replay['events']:,} events; API requests after it)")
    by_cat: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for inv in replay["invocations"]:
        by_cat[inv["category"]].append(inv)
    r.out(
        f"{'operation':<28}{'n':>5}{'DDB calls':>10}{'reads':>8}{'writes':>8}{'items':>8}"
        f"{'other':>7}{'WRU':>6}{'RRU':>6}  other services"
    )
    r.out(f"{'':<28}{'':>5}{'mean/max':>10}{'':>8}{'calls':>8}{'written':>8}")
    table = {}
    for cat in sorted(by_cat):
        rows = by_cat[cat]
        others = sorted({k for x in rows for k in x["ops"] if not k.startswith("dynamodb.")})
        kinds: Counter[str] = Counter()
        for x in rows:
            kinds.update(x["kinds_written"])
        table[cat] = {
            "n": len(rows),
            **{
                f"{k}_mean": statistics.mean(x[k] for x in rows)
                for k in (
                    "ddb_calls",
                    "ddb_reads",
                    "ddb_writes",
                    "items_written",
                    "other",
                    "wru",
                    "rru",
                    "bytes_read",
                    "total",
                    "cpu_s",
                    "wall_s",
                )
            },
            **{
                f"{k}_max": max(x[k] for x in rows)
                for k in ("ddb_calls", "ddb_reads", "ddb_writes", "items_written", "other", "total")
            },
            "scans": sum(x["scans"] for x in rows),
            "items_written_by_kind_per_event": {k: v / len(rows) for k, v in kinds.items()},
            "ops_total": dict(sum((Counter(x["ops"]) for x in rows), Counter())),
            "failed": sum(1 for x in rows if x["failed"]),
        }
        other_names = ",".join(o.split(".", 1)[1] for o in others)
        r.out(
            f"{cat[:27]:<28}{len(rows):>5}{_mm(rows, 'ddb_calls'):>10}{_mm(rows, 'ddb_reads'):>8}"
            f"{_mm(rows, 'ddb_writes'):>8}{_mm(rows, 'items_written'):>8}{_mm(rows, 'other'):>7}"
            f"{statistics.mean(x['wru'] for x in rows):>6.1f}"
            f"{statistics.mean(x['rru'] for x in rows):>6.1f}  {other_names[:14]}"
        )
    r.out("reads = GetItem+Query+BatchGetItem; writes = Put/Update/Delete/BatchWrite/TransactWrite")
    r.out("calls; items = items written (inside TransactWriteItems counted one by one).")
    r.out("WRU/RRU: estimated on-demand units from the items' sizes in the emulator (README).")
    state_kinds: Counter[str] = Counter()
    state_rows = [x for c, rs in by_cat.items() if c.startswith(STATE_ROW) for x in rs]
    for x in state_rows:
        state_kinds.update(x["kinds_written"])
    if state_rows:
        r.out(
            "items written per state event by kind: "
            + ", ".join(f"{k} {v / len(state_rows):.2f}" for k, v in sorted(state_kinds.items()))
        )
    r.out()
    r.header()
    worst = max((x["items_written"] for x in state_rows), default=0)
    r.figure(s, "max items written per state event", worst, "items", "<= 3", worst <= 3, "d")
    applied = [x for x in state_rows if x["items_written"]]
    r.figure(
        s,
        "items written per applied state event, mean",
        statistics.mean(x["items_written"] for x in applied) if applied else 0,
        "items",
    )
    r.figure(
        s,
        "max DynamoDB write calls per state event",
        max((x["ddb_writes"] for x in state_rows), default=0),
        "calls",
        fmt="d",
    )
    all_events = [
        x for x in replay["invocations"] if not x["category"].startswith(("GET", "sched"))
    ]
    r.figure(
        s,
        "max items written per event (any function)",
        max((x["items_written"] for x in all_events), default=0),
        "items",
        fmt="d",
    )
    detail = by_cat.get("GET /jobs/{id}", [])
    lo = min((x["ddb_calls"] for x in detail), default=None)
    hi = max((x["ddb_calls"] for x in detail), default=None)
    r.figure(
        s,
        "min DynamoDB calls per GET /jobs/{id}",
        lo,
        "calls",
        "1-2",
        None if lo is None else 1 <= lo <= 2,
        "d",
    )
    r.figure(
        s,
        "max DynamoDB calls per GET /jobs/{id}",
        hi,
        "calls",
        "1-2",
        None if hi is None else 1 <= hi <= 2,
        "d",
    )
    if detail:
        r.figure(
            s,
            "bytes read per GET /jobs/{id}, max",
            max(x["bytes_read"] for x in detail) / 1000,
            "kB",
            fmt=",.1f",
        )
    pages = by_cat.get("GET /jobs", [])
    if pages:
        worst_page = max(x["ddb_calls"] for x in pages)
        r.figure(
            s,
            "max DynamoDB calls per GET /jobs page (20)",
            worst_page,
            "calls",
            "<= 41 (1+2/job)",
            worst_page <= 41,
            "d",
        )
        r.figure(
            s,
            "bytes read per GET /jobs page, max",
            max(x["bytes_read"] for x in pages) / 1000,
            "kB",
            fmt=",.1f",
        )
    if replay.get("api_error"):
        r.out(f"API requests NOT MEASURED: {replay['api_error']}"[:WIDTH])
    scans = sum(x["scans"] for x in replay["invocations"])
    r.figure(s, "DynamoDB Scans (all operations)", scans, "scans", "0", scans == 0, "d")
    failed = sum(1 for x in replay["invocations"] if x["failed"])
    r.figure(
        s,
        "invocations failed (rejected events, non-200)",
        failed,
        "invocations",
        "0",
        failed == 0,
        "d",
    )
    return table


def section_reads(r: Report, reads: dict[int, dict[str, Any]]) -> dict[str, Any]:
    s = "2. Read paths at 10 and 1,000 jobs"
    r.section(s)
    sizes = sorted(reads)
    for n in sizes:
        x = reads[n]
        r.out(
            f"{n:,} jobs: {x['instances']:,} instances, {x['state_events']:,} state and "
            f"{x['object_events']:,} checkpoint events, {x['items']:,} items in the table"
        )
    r.out(f"{'DynamoDB calls (bytes read)':<34}" + "".join(f"{f'{n:,} jobs':>22}" for n in sizes))

    def cell(row: dict[str, Any] | None) -> str:
        if row is None:
            return f"{'-':>22}"
        return f"{row['ddb_calls']:>8} ({row['bytes_read'] / 1000:>9,.1f} kB)"

    def med(rows: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "ddb_calls": statistics.median(x["ddb_calls"] for x in rows),
            "bytes_read": statistics.median(x["bytes_read"] for x in rows),
        }

    lines = {
        "GET /jobs (limit 20, 7 days)": lambda x: x["list_7d"],
        "GET /jobs (limit 20, 93 days)": lambda x: x["list_93d"],
        "GET /jobs, next page (93 days)": lambda x: x["list_93d_next"],
        "GET /jobs/{id}, median": lambda x: med(x["detail"]),
        "GET /jobs/{id}, max": lambda x: max(x["detail"], key=lambda d: d["ddb_calls"]),
        "budget tick, first of a container": lambda x: x["ticks"][0],
        "budget tick, warm, median": lambda x: med(x["ticks"][1:]),
    }
    for label, pick in lines.items():
        r.out(f"{label:<34}" + "".join(cell(pick(reads[n])) for n in sizes))
    r.out("budgets: nlp-month (tag, month), account-day (account, day), llama-total (tag, total)")
    r.out()
    r.header()
    out: dict[str, Any] = {}
    for n in sizes:
        x = reads[n]
        page = x["list_7d"]["ddb_calls"]
        bound = 1 + 2 * x["page_jobs"]
        r.figure(
            s,
            f"GET /jobs page, {n:,} jobs",
            page,
            "calls",
            f"<= {bound} (1+2/job)",
            page <= bound,
            ",.0f",
        )
        wide = x["list_93d"]["ddb_calls"]
        r.figure(
            s,
            f"GET /jobs 93 days - 7 days, {n:,} jobs",
            wide - page,
            "calls",
            "0",
            wide == page,
            ",.0f",
        )
        tick = statistics.median(t["ddb_calls"] for t in x["ticks"])
        r.figure(
            s, f"budget tick, {n:,} jobs (median of 3)", tick, "calls", "<= 3", tick <= 3, ",.0f"
        )
        out[str(n)] = {"page": page, "page_93d": wide, "tick": tick}
    if len(sizes) >= 2:
        lo, hi = reads[sizes[0]], reads[sizes[-1]]
        t_lo = statistics.median(t["ddb_calls"] for t in lo["ticks"])
        t_hi = statistics.median(t["ddb_calls"] for t in hi["ticks"])
        r.figure(
            s,
            f"budget tick calls, {sizes[-1]:,} / {sizes[0]:,} jobs",
            t_hi / t_lo if t_lo else None,
            "x",
            "1x (no growth)",
            t_hi <= t_lo,
        )
    return out


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
    # The counting hooks (moto item lookups) run inside the replay: their time is left out.
    replay_s = replay["replay_s"] - replay["hooks_s"]
    rate = replay["events"] / replay_s
    r.figure(s, "replay wall time (hooks excluded)", replay_s, "s")
    r.figure(s, "counting hooks' time (excluded)", replay["hooks_s"], "s")
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
            s, f"CPU, {name} service on twins, median", _median(values), "us/event", fmt=",.0f"
        )
        r.figure(
            s,
            f"CPU, {name} service on twins, mean",
            statistics.mean(values) if values else 0,
            "us/event",
            fmt=",.0f",
        )
    for name, values in sorted(cpu["handler_us"].items()):
        r.figure(s, f"CPU, whole {name} handler, median", _median(values), "us/event", fmt=",.0f")
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
            f"emulator time during the replay (request handling, no profiler): {total:.1f} s of"
            f" {replay['replay_s']:.1f} s; by operation:"
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
        for side in ("client", "server"):
            areas = ", ".join(
                f"{k} {v:.1f}" for k, v in list(profile[side]["by_area_s"].items())[:8]
            )
            label = "replay thread" if side == "client" else "emulator (moto)"
            r.out(f"  {label}: {areas}"[:WIDTH])
        for side in ("client", "server"):
            r.out(f"  top own time, {'replay thread' if side == 'client' else 'emulator'}:")
            for row in profile[side]["top_tottime"][:8]:
                r.out(
                    f"    {row['tottime_s']:>7.2f} s {row['calls']:>8} x {row['function']}"[:WIDTH]
                )
        r.out("  top cumulative, replay thread (core and handlers):")
        for row in profile["client"]["top_cumtime_core"][:12]:
            r.out(f"    {row['cumtime_s']:>7.2f} s {row['calls']:>8} x {row['function']}"[:WIDTH])
    return {"replay_rate": rate, "ratio": ratio}


def section_cold(r: Report, cold: dict[str, Any]) -> None:
    s = "4. Cold start (import in a fresh interpreter, median of 5)"
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
    first = cold["instance_state_first_use"]
    r.figure(
        s,
        "instance_state: settings + 1st event model",
        first["settings_and_first_event_median_s"] * 1000,
        "ms",
        fmt=",.0f",
    )
    r.out(
        "  (built on first use, not at import; import + this = "
        f"{(first['import_median_s'] + first['settings_and_first_event_median_s']) / base:.2f}x"
        " boto3)"
        if base
        else ""
    )
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
    s = "5. Bundle size (zip, deflate)"
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


def section_cost(r: Report, model: dict[str, Any], growth: dict[str, Any] | None) -> None:
    s = "6. Self-cost model (monthly, us-east-1 list prices, no free tier)"
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
    sizes = model["record_bytes"]
    r.out(
        "record sizes (B): "
        + ", ".join(f"{k.replace('_', ' ')} {v:,.0f}" for k, v in sizes.items())
    )
    r.out(
        f"a job's partition as GET /jobs/{{id}} reads it at mid-month (4 instances, 1 checkpoint"
        f" object an hour each): {model['job_query_bytes_mid_month'] / 1e6:,.2f} MB"
    )
    if growth:
        r.out(
            "growth (one instance started and stopped N times, one checkpoint key written N times):"
        )
        for row in growth["rows"]:
            r.out(
                f"  N={row['cycles']:>5,}: instance head {row['instance_head_bytes']:>6,} B,"
                f" checkpoint head {row['checkpoint_head_bytes']:>6,} B, rollup"
                f" {row['rollup_bytes']:>5,} B, items in the job's partition"
                f" {row['items_in_partition']:,}"
            )
        last = growth["rows"][-1]
        largest = max(
            last["instance_head_bytes"], last["checkpoint_head_bytes"], last["rollup_bytes"]
        )
        r.figure(
            s,
            f"largest head or rollup after {last['cycles']:,} cycles",
            largest / 1000,
            "kB",
            "< 64 kB",
            largest < 64_000,
            ",.1f",
        )
    r.out(f"prices: {model['prices_as_of']}")


def section_latency(r: Report, latency: dict[str, Any] | None, error: str | None) -> None:
    s = "7. Budget alert latency (alert at - true crossing, simulated time)"
    r.section(s)
    if latency is None:
        r.out(f"NOT MEASURED: {error}"[:WIDTH])
        return
    for row in latency["alerts"]:
        r.out(
            f"{row['scenario']} {row['budget_id']} {row['threshold']} %: crossing "
            f"{row['crossing'][11:19]}, alert {row['at'][11:19]}, "
            f"{row['latency_s']:.0f} s"
        )
    for label, key in (("median", "median_latency_s"), ("max", "max_latency_s")):
        value = latency[key]
        r.figure(
            s,
            f"{label} alert latency",
            value,
            "s",
            "<= 120 s",
            None if value is None else value <= 120,
            fmt=",.0f",
        )
    r.figure(
        s,
        "AWS calls per simulated hour (whole replay)",
        latency["aws_calls_per_simulated_hour"],
        "calls/h",
        fmt=",.1f",
    )


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
        reads,
        records,
        replay_bench,
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
    cpu = attempt("handler_cpu", replay_bench.handler_cpu, scenario)
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
    profile_scenario = (
        make_scenario(10, 1, args.seed) if args.quick else make_scenario(20, 2, args.seed)
    )
    profile = attempt("profile", replay_bench.profile_replay, profile_scenario)
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
            "floor": floor,
            "rejected_events": replay["rejected"][:50],
        },
        "profile": profile,
        "cpu": None
        if cpu is None
        else {
            "service_us_median": {k: _median(v) for k, v in cpu["service_us"].items()},
            "handler_us_median": {k: _median(v) for k, v in cpu["handler_us"].items()},
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
