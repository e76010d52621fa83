"""Section 7 of the table: budget alert latency (alert time - true crossing, simulated
time) over the budget scenarios, predicted crossings (timers) and the others apart."""

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
        kind = "predicted" if row["predicted"] else "other"
        r.out(
            f"{row['scenario']} {row['budget_id']} {row['threshold']} % ({kind}): crossing "
            f"{row['crossing'][11:19]}, alert {row['at'][11:19]}, "
            f"{row['latency_s']:.0f} s"[:WIDTH]
        )
    for group, label in (("predicted", "predicted crossings"), ("other", "other crossings")):
        summary = latency[group]
        goal = summary["goal_s"]
        for stat, key in (("median", "median_latency_s"), ("max", "max_latency_s")):
            value = summary[key]
            r.figure(
                s,
                f"{stat} alert latency, {label}",
                value,
                "s",
                f"<= {goal} s",
                None if value is None else value <= goal,
                fmt=",.0f",
            )
    r.figure(
        s,
        "AWS calls per simulated hour (whole replay)",
        latency["aws_calls_per_simulated_hour"],
        "calls/h",
        fmt=",.1f",
    )
