"""Jobs side by side (``/compare``): per unit of work, per hour, waste and how each ran,
with every difference that makes them not comparable said plainly."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

from shared.domain.accelerators import accelerator_of
from shared.domain.job import JobCost, wall_clock_seconds
from shared.reports.formatting import money
from shared.reports.views import accelerator_keys, maybe_money

if TYPE_CHECKING:
    from shared.config.ledger import LedgerConfig, UtilizationConfig


def _per(numerator: Decimal, denominator: Decimal) -> str | None:
    return money(numerator / denominator) if denominator > 0 else None


def _compare_row(cost: JobCost, utilization: UtilizationConfig) -> dict[str, Any]:
    instance_hours = Decimal(cost.billed_seconds) / 3600
    wall_hours = Decimal(wall_clock_seconds(cost)) / 3600
    lifecycles = sorted({i.lifecycle for i in cost.instances}) or ["on-demand"]
    steps = cost.last_checkpoint_step
    return {
        "job_id": cost.job_id,
        "status": cost.status,
        "running": cost.status == "running",
        "instance_types": sorted({i.instance_type for i in cost.instances}),
        "accelerators": sorted(
            {accelerator_of(i.instance_type, utilization) for i in cost.instances}
        ),
        "lifecycle": lifecycles[0] if len(lifecycles) == 1 else "mixed",
        "instances": len(cost.instances),
        "instance_hours": money(instance_hours),
        "wall_clock_hours": money(wall_hours),
        "total_usd": money(cost.total_usd),
        "list_total_usd": money(cost.list_total_usd),
        "usd_per_hour": _per(cost.total_usd, wall_hours),
        "usd_per_instance_hour": _per(cost.instance_usd, instance_hours),
        "cost_per_step_usd": _per(cost.total_usd, Decimal(steps)) if steps else None,
        "cost_per_1k_steps_usd": maybe_money(cost.cost_per_1k_steps_usd),
        "cost_per_million_tokens_usd": maybe_money(cost.cost_per_million_tokens_usd),
        "steps": steps,
        "steps_per_hour": maybe_money(cost.steps_per_hour),
        "tokens_per_step": cost.tokens_per_step,
        "checkpoints": cost.checkpoints,
        "interruptions": cost.interruptions,
        # Measured (rule 10) or None: alarms say when an instance idles, not how busy it is.
        **accelerator_keys(cost),
        "idle_share": _idle_share(cost),
        "wasted_rerun_usd": money(cost.wasted_rerun_usd),
        "wasted_idle_usd": money(cost.wasted_idle_usd),
        "warmup_seconds": cost.warmup_seconds,
        "warmup_usd": maybe_money(cost.warmup_usd),
        "complete": cost.complete,
    }


def _idle_share(cost: JobCost) -> str | None:
    """The share of billed time the idle alarms (rule 6) called idle; None before any
    time is billed."""
    if not cost.billed_seconds:
        return None
    return f"{Decimal(cost.idle_seconds) / Decimal(cost.billed_seconds):.3f}"


def _names(rows: list[dict[str, Any]], keep: Any) -> str:
    return ", ".join(r["job_id"] for r in rows if keep(r))


def _compare_notes(rows: list[dict[str, Any]]) -> list[str]:
    """Every difference that makes the jobs not comparable as they stand, and what to
    compare instead."""
    notes = []
    families = {tuple(a for a in r["accelerators"] if a != "CPU") for r in rows}
    if len(families) > 1:
        notes.append(
            "different accelerators ("
            + "; ".join(f"{r['job_id']}: {', '.join(r['instance_types'])}" for r in rows)
            + "): compare the cost of the same work ($/step, $/1M tokens), not $/h"
        )
    if any("CPU" in r["accelerators"] and len(r["accelerators"]) > 1 for r in rows):
        notes.append(
            f"{_names(rows, lambda r: 'CPU' in r['accelerators'] and len(r['accelerators']) > 1)}"
            " also ran CPU instances (e.g. data preparation): they are in its total"
        )
    if len({r["lifecycle"] for r in rows}) > 1:
        notes.append(
            "spot and on-demand differ ("
            + "; ".join(f"{r['job_id']}: {r['lifecycle']}" for r in rows)
            + "): spot prices vary over time and an interruption costs a rerun; the same "
            "instances on demand cost more per hour"
        )
    if len({r["running"] for r in rows}) > 1:
        notes.append(
            f"{_names(rows, lambda r: r['running'])} is still running (its figures grow) "
            f"while {_names(rows, lambda r: not r['running'])} is not: compare $/step or "
            "$/1M tokens, not totals"
        )
    steps = {r["steps"] for r in rows}
    if None in steps:
        notes.append(
            f"no checkpoint steps for {_names(rows, lambda r: r['steps'] is None)}: no $/step "
            "or $/1M tokens; compare only if the jobs did the same work"
        )
    elif len(steps) > 1:
        notes.append(
            "different progress ("
            + ", ".join(f"{r['job_id']}: step {r['steps']}" for r in rows)
            + "): totals cover different amounts of work; compare $/step"
        )
    tokens = {r["tokens_per_step"] for r in rows}
    if None in tokens:
        notes.append(
            f"no tokens-per-step tag on {_names(rows, lambda r: r['tokens_per_step'] is None)}:"
            " $/1M tokens unknown; $/step compares only if a step is the same work in every job"
        )
    elif len(tokens) > 1:
        notes.append(
            "tokens per step differ ("
            + ", ".join(f"{r['job_id']}: {r['tokens_per_step']}" for r in rows)
            + "): $/step is not comparable; compare $/1M tokens"
        )
    if len({r["utilization"] for r in rows}) > 1 or any(
        Decimal(r["wasted_idle_usd"]) or Decimal(r["wasted_rerun_usd"]) for r in rows
    ):
        notes.append(
            "idle time and reruns differ: part of each cost difference is waste that a "
            "rerun of the same job need not repeat"
        )
    if not all(r["complete"] for r in rows):
        notes.append(
            f"{_names(rows, lambda r: not r['complete'])} has unpriced time: its figures "
            "are lower bounds"
        )
    return notes


def compare_jobs(costs: list[JobCost], config: LedgerConfig) -> dict[str, Any]:
    """Jobs side by side (per unit of work, per hour, waste, how each ran); ``notes``
    says every difference that makes them not comparable and what to compare instead.
    Accelerators are named by the configured families (``shared.domain.accelerators``)."""
    rows = [_compare_row(cost, config.utilization) for cost in costs]
    return {"jobs": rows, "notes": _compare_notes(rows)}
