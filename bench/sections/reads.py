"""Section 2 of the table: DynamoDB calls and bytes read by the API's read paths and the
budget tick at a small and a large ledger, and the targets that they do not grow."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

from bench.report import Report


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

    lines: dict[str, Callable[[dict[str, Any]], dict[str, Any] | None]] = {
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
