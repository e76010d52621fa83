"""Section 7 of the table: budget alert latency (alert time - true crossing, simulated
time) over the budget scenarios."""

from __future__ import annotations

from typing import Any

from bench.report import WIDTH, Report


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
