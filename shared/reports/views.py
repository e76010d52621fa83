"""How job costs are shown: decimal strings, ISO times, the replay contract's keys."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from shared.domain.finish_estimate import finish_estimate
from shared.domain.job import UNCONFIRMED_ITEMS, JobCost, ended_at, wall_clock_seconds
from shared.reports.formatting import cents as cents  # re-exported: callers format with them
from shared.reports.formatting import iso as iso
from shared.reports.formatting import money as money


def job_summary(cost: JobCost) -> dict[str, Any]:
    """The replay contract's job object (docs/cost-rules.md), plus extra keys."""
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
            "cost_per_1k_steps_usd": maybe_money(cost.cost_per_1k_steps_usd),
            "steps_per_hour": maybe_money(cost.steps_per_hour),
            "cost_per_million_tokens_usd": maybe_money(cost.cost_per_million_tokens_usd),
            "idle_seconds": cost.idle_seconds,
            "warmup_seconds": cost.warmup_seconds,
            "warmup_usd": maybe_money(cost.warmup_usd),
            **accelerator_keys(cost),
            **managed_keys(cost),
        },
    )


def accelerator_keys(cost: JobCost) -> dict[str, Any]:
    """Rule 10's keys: accelerator-seconds, measured utilization (``None``: not measured,
    never 100 % or 0 %), and the instance cost per accelerator-hour (``None`` while any
    time is unpriced: never a $0 figure)."""
    hours = Decimal(cost.accelerator_seconds) / 3600 if cost.accelerator_seconds else None
    if not cost.complete:
        hours = None
    return {
        "accelerator_seconds": cost.accelerator_seconds,
        "accelerator_counts_unknown": list(cost.accelerator_counts_unknown),
        "utilization": fraction_view(cost.utilization),
        "utilization_measured_share": fraction_view(cost.utilization_measured_share),
        "effective_accelerator_hours": maybe_money(cost.effective_accelerator_hours),
        "usd_per_accelerator_hour": money(cost.instance_usd / hours) if hours else None,
    }


def fraction_view(value: Decimal | None) -> str | None:
    """A fraction as a decimal string of 6 places (0.512345), or None."""
    return f"{value:.6f}" if value is not None else None


def managed_keys(cost: JobCost) -> dict[str, Any]:
    """The keys a job has from managed training and reserved capacity (none for a job that
    has neither: EC2 jobs look as they always did)."""
    out: dict[str, Any] = {}
    if cost.has_training:
        out["training_jobs"] = list(cost.training_jobs)
        out["training_job_name"] = cost.training_jobs[0] if len(cost.training_jobs) == 1 else None
        out["managed_spot_saving"] = maybe_money(cost.managed_spot_saving)
    if cost.has_reservation:
        out["reservations"] = [reservation_view(r) for r in cost.reservations]
    if cost.file_systems:
        out["file_systems"] = list(cost.file_systems)
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
    if cost.file_systems or cost.fsx_usd:  # FSx for Lustre storage (cost rule 13)
        extra["fsx"] = money(cost.fsx_usd)
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
        "utilization": maybe_money(view.utilization),
        "usd_per_instance_hour": maybe_money(view.usd_per_instance_hour),
        "wasted_reserved_usd": maybe_money(view.wasted_reserved_usd),
        "forecast": view.forecast,
        "unused_fraction_at_current_pace": maybe_money(view.unused_fraction_at_current_pace),
        "notes": list(view.notes),
    }


def maybe_money(value: Decimal | None) -> str | None:
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
    # Open segments as accrued to now (rule 9): the job's instances carry them so.
    accrued = {(i.instance_id, s.span.key): s for i in cost.instances for s in i.segments}
    for stored in records.all_segments():
        segment = accrued.get((stored.instance_id, stored.span.key), stored)
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


def estimate_to_finish(
    cost: JobCost, target_steps: int, utilization_drop: Decimal, now: datetime
) -> dict[str, Any]:
    """The cost to reach ``target_steps`` as a range, with the assumptions listed: never a
    single unqualified number (``shared.domain.finish_estimate``; raises its ValueError)."""
    e = finish_estimate(cost, target_steps, utilization_drop)
    basis = (
        "the current burn rate"
        if e.running_burn
        else "the rate of its instances' last run (the job is not running now)"
    )
    assumptions = [
        f"pace {e.pace_steps_per_hour:.1f} steps/h, measured between the first and last checkpoint",
        f"cost per hour {cents(e.burn_usd_per_hour)} from {basis}",
        f"high end: utilization drops by {utilization_drop * 100:.0f} % (slower pace) and "
        f"{e.rerun_share * 100:.1f} % of the time is rerun after interruptions, as in this "
        "job's own history",
        "checkpoint storage growth and data transfer are not included (small and "
        "unconfirmed respectively)",
    ]
    return {
        "job_id": cost.job_id,
        "target_steps": target_steps,
        "current_step": e.current_step,
        "remaining_steps": e.remaining_steps,
        "hours": {"low": money(e.hours), "high": money(e.slow_hours)},
        "cost_usd": {"low": money(e.low_usd), "high": money(e.high_usd)},
        "total_at_finish_usd": {
            "low": money(cost.total_usd + e.low_usd),
            "high": money(cost.total_usd + e.high_usd),
        },
        "assumptions": assumptions,
        "as_of": iso(now),
    }
