"""Section 4 of the table: import times in a fresh interpreter against boto3's, the
first-use cost, the Tracer, and imports without bytecode; shared by the full run and
``--cold-only``."""

from __future__ import annotations

from typing import Any

from bench.report import WIDTH, Report


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
