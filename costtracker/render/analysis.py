"""Views that look across a job's life or across jobs: the comparison, the cumulative
timeline and the estimate to finish."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from costtracker.render.text import WIDTH, fill, per_unit, status_word, table, usd


def _figure(value: str | None) -> str:
    """A measured quantity to two places, or "not measured"."""
    return "not measured" if value is None else f"{Decimal(value):,.2f}"


# (key, label, how to show it) of the comparison table, in reading order.
_COMPARE: list[tuple[str, str, Callable[[Any], str]]] = [
    ("status", "status", lambda v: status_word(str(v))),
    ("accelerators", "accelerators", lambda v: ", ".join(a.split(" (")[0] for a in v)),
    ("instance_types", "instances", lambda v: ", ".join(v)),
    ("lifecycle", "pricing model", str),
    ("complete", "priced", lambda v: "fully" if v else "incomplete"),
    ("steps", "last step", lambda v: "-" if v is None else f"{v:,}"),
    ("tokens_per_step", "tokens/step", lambda v: "-" if v is None else f"{v:,}"),
    ("total_usd", "total", usd),
    ("cost_per_step_usd", "$/step", per_unit),
    ("cost_per_million_tokens_usd", "$/1M tokens", per_unit),
    ("usd_per_hour", "$/h (wall clock)", per_unit),
    ("usd_per_instance_hour", "$/instance-hour", per_unit),
    ("wall_clock_hours", "wall clock", lambda v: f"{Decimal(v):,.2f} h"),
    ("instance_hours", "instance-hours", lambda v: f"{Decimal(v):,.2f}"),
    ("accelerator_hours", "accelerator-hours", _figure),
    ("effective_accelerator_hours", "effective acc-hours", _figure),
    ("steps_per_hour", "steps/h", _figure),
    ("tokens_per_second", "tokens/s", _figure),
    ("cost_per_1k_steps_usd", "$/1k steps", per_unit),
    ("usd_per_accelerator_hour", "$/accelerator-hour", per_unit),
    ("utilization", "utilization", lambda v: "not measured" if v is None else f"{Decimal(v):.1%}"),
    (
        "utilization_measured_share",
        "measured share",
        lambda v: "not measured" if v is None else f"{Decimal(v):.0%}",
    ),
    ("wasted_idle_usd", "idle waste", usd),
    ("wasted_rerun_usd", "rerun waste", usd),
    ("interruptions", "interruptions", str),
]


def compare(body: dict[str, Any]) -> str:
    """One column per job, full ids; more jobs than fit are shown in further blocks."""
    jobs = body["jobs"]
    label_width = max(len(label) for _, label, _ in _COMPARE)
    columns = [[j["job_id"], *[show(j.get(key)) for key, _, show in _COMPARE]] for j in jobs]
    blocks: list[list[list[str]]] = []
    chunk: list[list[str]] = []
    used = label_width
    for column in columns:  # as many whole columns per block as fit in the width
        width = max(len(cell) for cell in column) + 2
        if chunk and used + width > WIDTH:
            blocks.append(chunk)
            chunk, used = [], label_width
        chunk.append(column)
        used += width
    if chunk:
        blocks.append(chunk)
    tables = []
    for block in blocks:
        rows = [("", *[c[0] for c in block])]
        for n, (_, label, _) in enumerate(_COMPARE, start=1):
            rows.append((label, *[c[n] for c in block]))
        tables.append(table(rows))
    notes = "\n".join(
        textwrap.fill(n, WIDTH, initial_indent="note: ", subsequent_indent="      ")
        for n in body["notes"]
    )
    return "\n\n".join(tables) + ("\n" + notes if notes else "")


def timeline(body: dict[str, Any]) -> str:
    points = body["points"]
    top = max((Decimal(p["total_usd"]) for p in points), default=Decimal(0))
    bar_width = 40
    rows = [("AT", "SPENT SO FAR", "")]
    for p in points:
        value = Decimal(p["total_usd"])
        bar = "#" * int(value / top * bar_width) if top > 0 else ""
        rows.append((p["at"], usd(p["total_usd"]), bar))
    return f"Cumulative cost of {body['job_id']}\n" + table(rows, right=(1,))


def estimate(body: dict[str, Any]) -> str:
    cost, whole, span = body["cost_usd"], body["total_at_finish_usd"], body["hours"]
    lines = [
        f"Job {body['job_id']}: step {body['current_step']:,} of {body['target_steps']:,}"
        f" ({body['remaining_steps']:,} to go)",
        f"  to finish  {usd(cost['low'])} to {usd(cost['high'])} more, "
        f"{Decimal(span['low']):,.1f} to {Decimal(span['high']):,.1f} h of wall clock",
        f"  at finish  {usd(whole['low'])} to {usd(whole['high'])} in total",
        "  assumptions:",
    ]
    lines += [fill(a, "    ", "  - ") for a in body["assumptions"]]
    lines.append(f"  as of {body['as_of']}")
    return "\n".join(lines)
