"""How job costs are shown: decimal strings, ISO times, the replay contract's keys."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from shared.costing import UNCONFIRMED_ITEMS
from shared.models import JobCost

# Stored and reported to the nano-dollar; display rounds to cents.
_PRECISION = Decimal("0.000000001")


def money(value: Decimal) -> str:
    return format(value.quantize(_PRECISION, rounding=ROUND_HALF_EVEN), "f")


def cents(value: Decimal) -> str:
    return f"${value.quantize(Decimal('0.01'), rounding=ROUND_HALF_EVEN):,}"


def iso(at: datetime | None) -> str | None:
    if at is None:
        return None
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def job_summary(cost: JobCost) -> dict[str, Any]:
    """The replay contract's job object (SPEC), plus extra keys."""
    return {
        "job_id": cost.job_id,
        "tags": dict(sorted(cost.tags.items())),
        "status": cost.status,
        "cost_usd": {
            "total": money(cost.total_usd),
            "instance": money(cost.instance_usd),
            "ebs": money(cost.ebs_usd),
            "checkpoint_storage": money(cost.checkpoint_storage_usd),
            "wasted_rerun": money(cost.wasted_rerun_usd),
            "wasted_idle": money(cost.wasted_idle_usd),
        },
        "list_cost_usd": {"instance": money(cost.instance_list_usd)},
        "instance_seconds": cost.billed_seconds,
        "checkpoints": cost.checkpoints,
        "interruptions": cost.interruptions,
        "unconfirmed": list(cost.unconfirmed),
        "estimated": True,
        "complete": not cost.unpriced,
        "as_of": iso(cost.as_of),
        "started_at": iso(cost.started_at),
        "ended_at": iso(ended_at(cost)),
        "wall_clock_seconds": wall_clock_seconds(cost),
        "burn_rate_usd_per_hour": money(cost.burn_rate_usd_per_hour),
        "tag_conflicts": {k: list(v) for k, v in sorted(cost.tag_conflicts.items())},
        "price_sources": list(cost.price_sources),
        "checkpoint_objects": cost.checkpoint_objects,
        "last_checkpoint_at": iso(cost.last_checkpoint_at),
        "last_checkpoint_step": cost.last_checkpoint_step,
        "checkpoint_cadence_seconds": cost.checkpoint_cadence_seconds,
        "rebalance_recommendations": cost.rebalance_recommendations,
        "spend_at_risk_usd": money(cost.spend_at_risk_usd),
        "cost_per_1k_steps_usd": _maybe(cost.cost_per_1k_steps_usd),
        "steps_per_hour": _maybe(cost.steps_per_hour),
        "cost_per_million_tokens_usd": _maybe(cost.cost_per_million_tokens_usd),
        "idle_seconds": cost.idle_seconds,
        "warmup_seconds": cost.warmup_seconds,
        "warmup_usd": _maybe(cost.warmup_usd),
    }


def _span(cost: JobCost) -> tuple[datetime, datetime] | None:
    """From the first segment's start to the last one's end (``as_of`` while open)."""
    segments = [p.segment for i in cost.instances for p in i.segments]
    if not segments:
        return None
    start = min(s.start for s in segments)
    end = max(s.end if s.end is not None else cost.as_of for s in segments)
    return start, max(start, end)


def ended_at(cost: JobCost) -> datetime | None:
    """When the job's last instance stopped running; None while one runs."""
    segments = [p.segment for i in cost.instances for p in i.segments]
    if not segments or any(s.end is None for s in segments):
        return None
    return max(s.end for s in segments if s.end is not None)


def wall_clock_seconds(cost: JobCost) -> int:
    """Elapsed time from the job's first start to its last stop (or now): not the
    instance-hours, which add up every instance's time."""
    span = _span(cost)
    return int((span[1] - span[0]).total_seconds()) if span else 0


def _maybe(value: Decimal | None) -> str | None:
    return money(value) if value is not None else None


def job_detail(cost: JobCost) -> dict[str, Any]:
    """The API's job breakdown: the summary plus per-instance segments and rates."""
    detail = job_summary(cost)
    detail["unconfirmed_details"] = {
        **{k: v for k, v in UNCONFIRMED_ITEMS.items()},
        **{
            f"unpriced:{u.kind}:{u.key}:{u.region}": (
                f"no {u.kind} price for {u.key} in {u.region} yet; filled in when an override "
                "or the Price List API provides one"
            )
            for u in cost.unpriced
        },
    }
    detail["instances"] = [
        {
            "instance_id": i.instance_id,
            "instance_type": i.instance_type,
            "instance_usd": money(i.instance_usd),
            "ebs_usd": money(i.ebs_usd),
            "billed_seconds": i.billed_seconds,
            "running_since": iso(i.running_since),
            "burn_rate_usd_per_hour": money(i.hourly_rate_usd),
            "segments": [
                {
                    "start": iso(p.segment.start),
                    "end": iso(p.segment.end),
                    "billed_seconds": p.billed_seconds,
                    "state": "open" if p.segment.end is None else "closed",
                    "priced": p.priced,
                    "cost_usd": money(p.effective_usd) if p.effective_usd is not None else None,
                    "list_cost_usd": money(p.list_usd) if p.list_usd is not None else None,
                    "rates": [
                        {
                            "since": iso(step.since),
                            "list_usd_per_hour": money(step.rate.list_usd),
                            "effective_usd_per_hour": money(step.rate.effective_usd),
                            "source": step.rate.source.value,
                            "checked_on": step.rate.checked_on.isoformat(),
                            "region": step.rate.region,
                        }
                        for step in p.steps
                    ],
                }
                for p in i.segments
            ],
        }
        for i in cost.instances
    ]
    return detail


def job_line_items(cost: JobCost, items: Any, now: datetime) -> list[dict[str, Any]]:
    """Segments, checkpoints, interruptions and idle periods, in time order."""
    from shared.costing import idle_windows, object_spans

    lines: list[dict[str, Any]] = []
    for instance in cost.instances:
        for priced in instance.segments:
            lines.append(
                {
                    "kind": "segment",
                    "at": iso(priced.segment.start),
                    "instance_id": instance.instance_id,
                    "instance_type": instance.instance_type,
                    "start": iso(priced.segment.start),
                    "end": iso(priced.segment.end),
                    "billed_seconds": priced.billed_seconds,
                    "cost_usd": money(priced.effective_usd)
                    if priced.effective_usd is not None
                    else None,
                    "priced": priced.priced,
                }
            )
    for record in items.instances:
        for notice in record.spot_notices:
            lines.append(
                {
                    "kind": "interruption" if notice.is_interruption else "rebalance",
                    "at": iso(notice.at),
                    "instance_id": record.instance_id,
                    "action": notice.action,
                }
            )
        for lo, hi in idle_windows(record, now):
            lines.append(
                {
                    "kind": "idle",
                    "at": iso(lo),
                    "instance_id": record.instance_id,
                    "start": iso(lo),
                    "end": iso(hi),
                }
            )
    for obj in items.checkpoints:
        for span in object_spans(obj):
            lines.append(
                {
                    "kind": "checkpoint",
                    "at": iso(span.start),
                    "step": obj.step,
                    "object": f"s3://{obj.bucket}/{obj.key}",
                    "size_bytes": span.size_bytes,
                    "deleted_at": iso(span.end),
                }
            )
    return sorted(lines, key=lambda line: (line["at"] or "", line["kind"]))


def _family(instance_type: str) -> str:
    family = instance_type.split(".", 1)[0]
    if family.startswith(("trn", "inf")):
        return "Neuron (Trainium/Inferentia)"
    if family[:1] in ("p", "g") and family[1:2].isdigit():
        return "NVIDIA GPU"
    return "CPU"


def _per(numerator: Decimal, denominator: Decimal) -> str | None:
    return money(numerator / denominator) if denominator > 0 else None


def _job_tokens(records: list[Any], tokens_tag: str) -> int | None:
    from shared.tags import tokens_per_step

    for record in records:
        tokens = tokens_per_step(record.profile.tags.get(tokens_tag))
        if tokens is not None:
            return tokens
    return None


def _compare_row(cost: JobCost, records: list[Any], tokens_tag: str) -> dict[str, Any]:
    instance_hours = Decimal(cost.billed_seconds) / 3600
    wall_hours = Decimal(wall_clock_seconds(cost)) / 3600
    lifecycles = sorted({r.profile.lifecycle for r in records}) or ["on-demand"]
    steps = cost.last_checkpoint_step
    busy = (
        1 - Decimal(cost.idle_seconds) / Decimal(cost.billed_seconds)
        if cost.billed_seconds
        else None
    )
    return {
        "job_id": cost.job_id,
        "status": cost.status,
        "running": cost.status == "running",
        "instance_types": sorted({i.instance_type for i in cost.instances}),
        "accelerators": sorted({_family(i.instance_type) for i in cost.instances}),
        "lifecycle": lifecycles[0] if len(lifecycles) == 1 else "mixed",
        "instances": len(cost.instances),
        "instance_hours": money(instance_hours),
        "wall_clock_hours": money(wall_hours),
        "total_usd": money(cost.total_usd),
        "list_total_usd": money(
            cost.instance_list_usd + cost.ebs_usd + cost.checkpoint_storage_usd
        ),
        "usd_per_hour": _per(cost.total_usd, wall_hours),
        "usd_per_instance_hour": _per(cost.instance_usd, instance_hours),
        "cost_per_step_usd": _per(cost.total_usd, Decimal(steps)) if steps else None,
        "cost_per_1k_steps_usd": _maybe(cost.cost_per_1k_steps_usd),
        "cost_per_million_tokens_usd": _maybe(cost.cost_per_million_tokens_usd),
        "steps": steps,
        "steps_per_hour": _maybe(cost.steps_per_hour),
        "tokens_per_step": _job_tokens(records, tokens_tag),
        "checkpoints": cost.checkpoints,
        "interruptions": cost.interruptions,
        "utilization": f"{busy:.3f}" if busy is not None else None,
        "idle_share": f"{1 - busy:.3f}" if busy is not None else None,
        "wasted_rerun_usd": money(cost.wasted_rerun_usd),
        "wasted_idle_usd": money(cost.wasted_idle_usd),
        "warmup_seconds": cost.warmup_seconds,
        "warmup_usd": _maybe(cost.warmup_usd),
        "complete": not cost.unpriced,
    }


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


def compare_jobs(costs: list[JobCost], instances: list[Any], tokens_tag: str) -> dict[str, Any]:
    """Jobs side by side (per unit of work, per hour, waste, how each ran); ``notes``
    says every difference that makes them not comparable and what to compare instead."""
    rows = [
        _compare_row(cost, list(records), tokens_tag)
        for cost, records in zip(costs, instances, strict=True)
    ]
    return {"jobs": rows, "notes": _compare_notes(rows)}


def estimate_to_finish(
    cost: JobCost, target_steps: int, utilization_drop: Decimal, now: datetime
) -> dict[str, Any]:
    """The cost to reach ``target_steps`` as a range, with the assumptions listed: never a
    single unqualified number."""
    if cost.steps_per_hour is None or cost.last_checkpoint_step is None:
        raise ValueError("needs at least two checkpoints with steps to measure a pace")
    remaining = max(0, target_steps - cost.last_checkpoint_step)
    pace = cost.steps_per_hour
    burn = cost.burn_rate_usd_per_hour
    basis = "the current burn rate"
    if burn == 0:  # stopped: what its instances cost per hour when they last ran
        burn = sum(
            (
                p.steps[-1].rate.effective_usd
                for i in cost.instances
                for p in i.segments[-1:]
                if p.steps
            ),
            Decimal(0),
        )
        basis = "the rate of its instances' last run (the job is not running now)"
    hours = Decimal(remaining) / pace if pace > 0 else Decimal(0)
    rerun_share = cost.wasted_rerun_usd / cost.instance_usd if cost.instance_usd else Decimal(0)
    low = hours * burn
    slow_hours = hours / (1 - utilization_drop)
    high = slow_hours * burn * (1 + rerun_share)
    assumptions = [
        f"pace {pace:.1f} steps/h, measured between the first and last checkpoint",
        f"cost per hour {cents(burn)} from {basis}",
        f"high end: utilization drops by {utilization_drop * 100:.0f} % (slower pace) and "
        f"{rerun_share * 100:.1f} % of the time is rerun after interruptions, as in this "
        "job's own history",
        "checkpoint storage growth and data transfer are not included (small and "
        "unconfirmed respectively)",
    ]
    return {
        "job_id": cost.job_id,
        "target_steps": target_steps,
        "current_step": cost.last_checkpoint_step,
        "remaining_steps": remaining,
        "hours": {"low": money(hours), "high": money(slow_hours)},
        "cost_usd": {"low": money(low), "high": money(high)},
        "total_at_finish_usd": {
            "low": money(cost.total_usd + low),
            "high": money(cost.total_usd + high),
        },
        "assumptions": assumptions,
        "as_of": iso(now),
    }
