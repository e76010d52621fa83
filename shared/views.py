"""How job costs are shown: decimal strings, ISO times, the replay contract's keys."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from shared.domain.job import UNCONFIRMED_ITEMS, JobCost

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
    }


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
            "recent_segments": [segment_view(s) for s in i.segments],
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


def compare_jobs(costs: list[JobCost]) -> dict[str, Any]:
    """Jobs side by side; ``notes`` says what is not comparable and why."""
    rows = []
    tokens: dict[str, int | None] = {}
    for cost in costs:
        per_step = cost.tokens_per_step
        tokens[cost.job_id] = per_step
        hours = Decimal(cost.billed_seconds) / 3600
        rows.append(
            {
                "job_id": cost.job_id,
                "instance_types": sorted({i.instance_type for i in cost.instances}),
                "accelerators": sorted({_family(i.instance_type) for i in cost.instances}),
                "instance_hours": money(hours),
                "total_usd": money(cost.total_usd),
                "cost_per_1k_steps_usd": money(cost.cost_per_1k_steps_usd)
                if cost.cost_per_1k_steps_usd is not None
                else None,
                "cost_per_million_tokens_usd": money(cost.cost_per_million_tokens_usd)
                if cost.cost_per_million_tokens_usd is not None
                else None,
                "steps": cost.last_checkpoint_step,
                "tokens_per_step": per_step,
                "idle_share": f"{Decimal(cost.idle_seconds) / Decimal(cost.billed_seconds):.3f}"
                if cost.billed_seconds
                else None,
                "wasted_rerun_usd": money(cost.wasted_rerun_usd),
                "wasted_idle_usd": money(cost.wasted_idle_usd),
                "warmup_seconds": cost.warmup_seconds,
                "warmup_usd": money(cost.warmup_usd) if cost.warmup_usd is not None else None,
                "complete": cost.complete,
            }
        )
    notes = []
    known_tokens = {v for v in tokens.values() if v is not None}
    if len(known_tokens) > 1:
        notes.append(
            "tokens per step differ ("
            + ", ".join(f"{j}: {t}" for j, t in tokens.items())
            + "): cost per 1,000 steps is not "
            "comparable; compare cost per million tokens"
        )
    elif None in tokens.values():
        missing = [j for j, t in tokens.items() if t is None]
        notes.append(
            f"no tokens-per-step tag on {', '.join(missing)}: cost per million "
            "tokens unknown; cost per 1,000 steps compares only if a step is the "
            "same work in every job"
        )
    if any(r["steps"] is None for r in rows):
        notes.append("a job without checkpoint steps has no cost per step")
    if any(not r["complete"] for r in rows):
        notes.append("a job has unpriced time: its total is incomplete")
    return {"jobs": rows, "notes": notes}


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
