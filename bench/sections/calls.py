"""Section 1 of the table: AWS calls and items written per event kind (from the counted
replay), the per-operation summary results.json keeps, and the targets on items written
per state event and DynamoDB calls per API request."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from typing import Any

from bench.report import WIDTH, Report

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
