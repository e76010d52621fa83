"""How job costs are shown: decimal strings, ISO times, the replay contract's keys."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from shared.domain.job import UNCONFIRMED_ITEMS, JobCost
from shared.formatting import cents as cents  # re-exported: callers format with them
from shared.formatting import iso as iso
from shared.formatting import money as money


def job_summary(cost: JobCost) -> dict[str, Any]:
    """The replay contract's job object (SPEC), plus extra keys."""
    return add_managed_costs(
        cost,
        {
            "job_id": cost.job_id,
            "tags": dict(sorted(cost.tags.items())),
            "accounts": list(cost.accounts),
            "status": cost.status,
            "cost_usd": {
                "total": money(cost.total_usd),
                "instance": money(cost.instance_usd),
                "ebs": money(cost.ebs_usd),
                "checkpoint_storage": money(cost.checkpoint_storage_usd),
                "wasted_rerun": money(cost.wasted_rerun_usd),
                "wasted_idle": money(cost.wasted_idle_usd),
            },
            "list_cost_usd": {
                "total": money(cost.list_total_usd),
                "instance": money(cost.instance_list_usd),
                "ebs": money(cost.ebs_usd),
                "checkpoint_storage": money(cost.checkpoint_storage_usd),
                "wasted_rerun": money(cost.wasted_rerun_list_usd),
                "wasted_idle": money(cost.wasted_idle_list_usd),
            },
            "instance_seconds": cost.billed_seconds,
            "checkpoints": cost.checkpoints,
            "interruptions": cost.interruptions,
            "complete": cost.complete,
            "unconfirmed": list(cost.unconfirmed),
            "warnings": [{"kind": w.kind, "detail": w.detail} for w in cost.warnings],
            "estimated": True,
            "as_of": iso(cost.as_of),
            "started_at": iso(cost.started_at),
            "ended_at": iso(ended_at(cost)),
            "wall_clock_seconds": wall_clock_seconds(cost),
            "burn_rate_usd_per_hour": money(cost.burn_rate_usd_per_hour),
            "tag_conflicts": {k: list(v) for k, v in sorted(cost.tag_conflicts.items())},
            "price_sources": list(cost.price_sources),
            "unpriced": list(cost.unpriced),
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
            **managed_keys(cost),
        },
    )


def managed_keys(cost: JobCost) -> dict[str, Any]:
    """The keys a job has from managed training and reserved capacity (none for a job that
    has neither: EC2 jobs look as they always did)."""
    out: dict[str, Any] = {}
    if cost.has_training:
        out["training_jobs"] = list(cost.training_jobs)
        out["training_job_name"] = cost.training_jobs[0] if len(cost.training_jobs) == 1 else None
        out["managed_spot_saving"] = _maybe(cost.managed_spot_saving)
    if cost.has_reservation:
        out["reservations"] = [reservation_view(r) for r in cost.reservations]
    return out


def add_managed_costs(cost: JobCost, document: dict[str, Any]) -> dict[str, Any]:
    """``cost_usd`` / ``list_cost_usd`` gain ``ml_storage``, ``warm_pool`` (a SageMaker job)
    and ``wasted_reserved`` (unused reserved capacity) where the job has them."""
    extra: dict[str, str] = {}
    if cost.has_training:
        extra["ml_storage"] = money(cost.ml_storage_usd)
        extra["warm_pool"] = money(cost.warm_pool_usd)
    if cost.has_reservation or cost.wasted_reserved_usd:
        extra["wasted_reserved"] = money(cost.wasted_reserved_usd)
    for key in ("cost_usd", "list_cost_usd"):
        if key in document:
            document[key] = {**document[key], **extra}
    return document


def reservation_view(view: Any) -> dict[str, Any]:
    return {
        "reservation_id": view.reservation_id,
        "kind": view.kind,
        "instance_type": view.instance_type,
        "instance_count": view.instance_count,
        "reserved_instance_seconds": view.reserved_instance_seconds,
        "used_instance_seconds": view.used_instance_seconds,
        "unused_instance_seconds": view.unused_instance_seconds,
        "utilization": _maybe(view.utilization),
        "usd_per_instance_hour": _maybe(view.usd_per_instance_hour),
        "wasted_reserved_usd": _maybe(view.wasted_reserved_usd),
        "forecast": view.forecast,
        "unused_fraction_at_current_pace": _maybe(view.unused_fraction_at_current_pace),
        "notes": list(view.notes),
    }


def _span(cost: JobCost) -> tuple[datetime, datetime] | None:
    """From the job's first start to its last instance's stop (``as_of`` while one runs)."""
    if cost.started_at is None:
        return None
    end = ended_at(cost) or cost.as_of
    return cost.started_at, max(cost.started_at, end)


def ended_at(cost: JobCost) -> datetime | None:
    """When the job's last instance stopped running; None while one runs (the latest
    segment of every instance is always in its head's window)."""
    if any(i.running_since is not None for i in cost.instances):
        return None
    ends = [s.span.end for i in cost.instances for s in i.segments if s.span.end is not None]
    return max(ends, default=None)


def wall_clock_seconds(cost: JobCost) -> int:
    """Elapsed time from the job's first start to its last stop (or now): not the
    instance-hours, which add up every instance's time."""
    span = _span(cost)
    return int((span[1] - span[0]).total_seconds()) if span else 0


def _maybe(value: Decimal | None) -> str | None:
    return money(value) if value is not None else None


def _rate_view(cost: Any) -> list[dict[str, Any]]:
    pin = cost.pin
    if pin is None:
        return []
    view = {
        "since": iso(cost.span.start),
        "source": pin.source.value,
        "checked_on": pin.checked_on,
        "region": pin.region,
    }
    if pin.rate is not None:
        view["list_usd_per_hour"] = money(pin.rate.list_usd)
        view["effective_usd_per_hour"] = money(pin.rate.effective_usd)
    else:
        view["series"] = pin.series
    return [view]


def segment_view(cost: Any) -> dict[str, Any]:
    closed = cost.span.end is not None
    return {
        "start": iso(cost.span.start),
        "end": iso(cost.span.end),
        "billed_seconds": cost.billed_seconds,
        "state": "closed" if closed else "open",
        "priced": cost.priced,
        "cost_usd": money(cost.eff_num / 3600) if cost.eff_num is not None else None,
        "list_cost_usd": money(cost.list_num / 3600) if cost.list_num is not None else None,
        "inferred": cost.span.inferred,
        "rates": _rate_view(cost),
    }


def job_detail(cost: JobCost) -> dict[str, Any]:
    """The API's job breakdown: the summary plus per-instance figures and recent segments."""
    detail = job_summary(cost)
    detail["unconfirmed_details"] = {
        **dict(UNCONFIRMED_ITEMS),
        **{
            f"unpriced:{key}": (
                f"no {key.split(':')[0]} price for {key.split(':')[1]} in {key.split(':')[2]} "
                "yet; filled in when an override or the Price List API provides one"
            )
            for key in cost.unpriced
        },
    }
    detail["instances"] = [
        {
            "instance_id": i.instance_id,
            "instance_type": i.instance_type,
            "account": i.account,
            "region": i.region,
            "lifecycle": i.lifecycle,
            "inferred": i.inferred,
            "instance_usd": money(i.instance_usd),
            "ebs_usd": money(i.ebs_usd),
            "billed_seconds": i.billed_seconds,
            "running_since": iso(i.running_since),
            "burn_rate_usd_per_hour": money(i.burn_usd_per_hour),
            "segments": [segment_view(s) for s in i.segments],
        }
        for i in cost.instances
    ]
    return detail


def job_line_items(cost: JobCost, records: Any, now: datetime) -> list[dict[str, Any]]:
    """Segments, checkpoint versions, interruptions and idle periods, in time order."""
    lines: list[dict[str, Any]] = []
    types = {i.instance_id: i.instance_type for i in cost.instances}
    for segment in records.all_segments():
        lines.append(
            {
                "kind": "segment",
                "at": iso(segment.span.start),
                "instance_id": segment.instance_id,
                "instance_type": types.get(segment.instance_id),
                **segment_view(segment),
            }
        )
    for instance_id, notice in records.notices:
        lines.append(
            {
                "kind": "interruption",
                "at": iso(notice.at),
                "instance_id": instance_id,
                "action": notice.action,
            }
        )
    episodes = list(records.idle) + [(h.instance_id, e) for h in records.heads for e in h.idle]
    for instance_id, episode in {(i, e.segment_key, e.start): (i, e) for i, e in episodes}.values():
        lines.append(
            {
                "kind": "idle",
                "at": iso(episode.start),
                "instance_id": instance_id,
                "start": iso(episode.start),
                "end": iso(episode.end),
            }
        )
    versions = [(h, v) for h in records.checkpoints for v in h.versions] + [
        (h, v) for h, _, v in records.versions if h is not None
    ]
    for head, version in {(id(h), v.write_event_id): (h, v) for h, v in versions}.values():
        lines.append(
            {
                "kind": "checkpoint",
                "at": iso(version.start),
                "step": head.step,
                "object": f"s3://{head.bucket}/{head.key}",
                "size_bytes": version.size_bytes,
                "deleted_at": iso(version.end),
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


def _compare_row(cost: JobCost) -> dict[str, Any]:
    instance_hours = Decimal(cost.billed_seconds) / 3600
    wall_hours = Decimal(wall_clock_seconds(cost)) / 3600
    lifecycles = sorted({i.lifecycle for i in cost.instances}) or ["on-demand"]
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
        "tokens_per_step": cost.tokens_per_step,
        "checkpoints": cost.checkpoints,
        "interruptions": cost.interruptions,
        "utilization": f"{busy:.3f}" if busy is not None else None,
        "idle_share": f"{1 - busy:.3f}" if busy is not None else None,
        "wasted_rerun_usd": money(cost.wasted_rerun_usd),
        "wasted_idle_usd": money(cost.wasted_idle_usd),
        "warmup_seconds": cost.warmup_seconds,
        "warmup_usd": _maybe(cost.warmup_usd),
        "complete": cost.complete,
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


def compare_jobs(costs: list[JobCost]) -> dict[str, Any]:
    """Jobs side by side (per unit of work, per hour, waste, how each ran); ``notes``
    says every difference that makes them not comparable and what to compare instead."""
    rows = [_compare_row(cost) for cost in costs]
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
                p.pin.rate.effective_usd
                for i in cost.instances
                for p in i.segments[-1:]
                if p.pin is not None and p.pin.rate is not None
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
