"""Efficiency people can see: a job's accelerator-hours and how much of them did work,
its throughput and unit costs, its retries and rerun waste, and its checkpoint storage
in GB over time; and a team's jobs side by side (``/jobs/{id}/efficiency``,
``/efficiency``). Every figure is measured or ``None`` ("not measured"), never a default;
steps and tokens of two jobs are never added (each job trains its own model)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from shared.domain.job import JobCost, JobRecords
from shared.reports.formatting import iso, money
from shared.reports.views import accelerator_keys, maybe_money

GB = Decimal(2**30)  # a storage GB is 2^30 bytes (AWS's billing convention)


def _hours(seconds: int | None) -> Decimal | None:
    return Decimal(seconds) / 3600 if seconds is not None else None


def storage_series(
    records: JobRecords, start: datetime | None, now: datetime, points: int
) -> list[dict[str, str]]:
    """Checkpoint storage held (GB) at ``points`` evenly spaced instants from the job's
    first checkpoint write (or start) to ``now``: each stored version counts from its
    write until it is deleted or overwritten."""
    versions = [(v.start, v.end, v.size_bytes) for h in records.checkpoints for v in h.versions]
    versions += [(v.start, v.end, v.size_bytes) for h, _, v in records.versions if h is not None]
    unique = sorted(set(versions), key=lambda v: v[0])
    if not unique:
        return []
    first = min(start or unique[0][0], unique[0][0])
    if now <= first:
        return []
    step = (now - first) / (points - 1)
    out = []
    for n in range(points):
        at = first + step * n
        held = sum(size for lo, hi, size in unique if lo <= at and (hi is None or at < hi))
        out.append({"at": iso(at) or "", "gb": money(Decimal(held) / GB)})
    return out


def efficiency_row(cost: JobCost) -> dict[str, Any]:
    """One job's efficiency figures (the job view, the team view, the comparison)."""
    keys = accelerator_keys(cost)
    tokens_per_second = (
        cost.steps_per_hour * cost.tokens_per_step / 3600
        if cost.steps_per_hour is not None and cost.tokens_per_step
        else None
    )
    rerun_share = (
        f"{cost.wasted_rerun_usd / cost.instance_usd:.6f}" if cost.instance_usd > 0 else None
    )
    return {
        "job_id": cost.job_id,
        "status": cost.status,
        "instance_types": sorted({i.instance_type for i in cost.instances}),
        "accelerator_hours": maybe_money(_hours(keys["accelerator_seconds"])),
        "effective_accelerator_hours": keys["effective_accelerator_hours"],
        "utilization": keys["utilization"],
        "utilization_measured_share": keys["utilization_measured_share"],
        "accelerator_counts_unknown": keys["accelerator_counts_unknown"],
        "steps": cost.last_checkpoint_step,
        "steps_per_hour": maybe_money(cost.steps_per_hour),
        "tokens_per_step": cost.tokens_per_step,
        "tokens_per_second": maybe_money(tokens_per_second),
        "total_usd": money(cost.total_usd),
        "usd_per_accelerator_hour": keys["usd_per_accelerator_hour"],
        "cost_per_1k_steps_usd": maybe_money(cost.cost_per_1k_steps_usd),
        "cost_per_million_tokens_usd": maybe_money(cost.cost_per_million_tokens_usd),
        "interruptions": cost.interruptions,
        "wasted_rerun_usd": money(cost.wasted_rerun_usd),
        "rerun_share_of_instance_cost": rerun_share,
        "wasted_idle_usd": money(cost.wasted_idle_usd),
        "checkpoint_storage_usd": money(cost.checkpoint_storage_usd),
        "complete": cost.complete,
    }


def job_efficiency(
    cost: JobCost, records: JobRecords, now: datetime, points: int
) -> dict[str, Any]:
    """The job view: its efficiency figures and its checkpoint storage over time."""
    return {
        **efficiency_row(cost),
        "storage_gb": storage_series(records, cost.started_at, now, points),
        "as_of": iso(now),
        "estimated": True,
    }


def team_efficiency(costs: list[JobCost], matched: int, now: datetime) -> dict[str, Any]:
    """A scope's jobs side by side, with the sums that add (accelerator-hours, measured
    effective accelerator-hours, cost, rerun waste, interruptions): never steps, tokens
    or a utilization averaged over unrelated jobs."""
    rows = [efficiency_row(c) for c in costs]
    known = all(r["accelerator_hours"] is not None for r in rows)
    hours = sum((Decimal(r["accelerator_hours"] or 0) for r in rows), Decimal(0))
    measured = [r for r in rows if r["effective_accelerator_hours"] is not None]
    instance_usd = sum((c.instance_usd for c in costs), Decimal(0))
    priced = all(c.complete for c in costs)
    return {
        "jobs": rows,
        "more_jobs": max(0, matched - len(rows)),
        "totals": {
            "jobs": len(rows),
            "accelerator_hours": money(hours) if known else None,
            "effective_accelerator_hours": money(
                sum((Decimal(r["effective_accelerator_hours"]) for r in measured), Decimal(0))
            )
            if measured
            else None,
            "jobs_measured": len(measured),
            "total_usd": money(sum((c.total_usd for c in costs), Decimal(0))),
            "usd_per_accelerator_hour": money(instance_usd / hours)
            if known and hours and priced
            else None,
            "interruptions": sum(c.interruptions for c in costs),
            "wasted_rerun_usd": money(sum((c.wasted_rerun_usd for c in costs), Decimal(0))),
            "wasted_idle_usd": money(sum((c.wasted_idle_usd for c in costs), Decimal(0))),
        },
        "notes": [
            "utilization is per job (measured time only): a team figure would average "
            "unrelated jobs, so none is given; effective accelerator-hours add up",
            "steps and tokens are per job (each trains its own model), never added",
        ],
        "as_of": iso(now),
        "estimated": True,
    }
