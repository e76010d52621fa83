"""The API's document of a change in spend (``/change``): the two periods, the split to
the cent, and each job's own split (the largest ``TOP_ITEMS`` changes, then the rest)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from shared.domain.divisia import to_cents
from shared.domain.limits import TOP_ITEMS
from shared.domain.spend_change import ChangeDecomposition, JobChange, JobPeriod, PeriodFigures
from shared.reports.formatting import iso, money
from shared.reports.views import fraction_view

BASIS_WORDS = {
    "steps": "accelerator-hours per 1,000 steps",
    "utilization": "accelerator-hours per utilized accelerator-hour (1 / utilization)",
    "none": "not measured (no steps or utilization in both periods): the change in "
    "accelerator-hours counts as use",
    "one_period": "accelerator spend in one period only: all of it is use",
}


def _maybe(value: Decimal | None) -> str | None:
    return money(value) if value is not None else None


def _exact(value: Decimal) -> str:
    """To the nano-dollar, a -0 (a 1e-30 log residual) read as 0."""
    return money(value.quantize(Decimal("1e-9")) + 0)


def _cents(value: Decimal) -> str:
    return f"{value:.2f}"


def _period_json(p: PeriodFigures) -> dict[str, Any]:
    return {
        "start": iso(p.start),
        "end": iso(p.end),
        "jobs": p.active_jobs,
        "accelerator_hours": money(p.accelerator_hours),
        "accelerator_usd": money(p.accelerator_usd),
        "usd_per_accelerator_hour": _maybe(p.rate),
        "total_usd": money(p.total_usd),
        "wasted_idle_usd": money(p.wasted_idle_usd),
        "wasted_rerun_usd": money(p.wasted_rerun_usd),
        "wasted_usd": money(p.wasted_usd),
    }


def _job_period(p: JobPeriod) -> dict[str, Any]:
    return {
        "accelerator_hours": money(p.accelerator_hours),
        "hours_are": "instance-hours" if p.per_instance else "accelerator-hours",
        "accelerator_usd": money(p.accelerator_usd),
        "usd_per_accelerator_hour": _maybe(p.rate),
        "total_usd": money(p.total_usd),
        "steps": p.steps,
        "cost_per_1k_steps_usd": _maybe(p.cost_per_1k_steps),
        "utilization": fraction_view(p.utilization),
    }


def _job_json(job: JobChange) -> dict[str, Any]:
    exact = {"use": job.parts.use, "efficiency": job.parts.efficiency,
             "price": job.parts.price, "other": job.other_usd}  # fmt: skip
    change = Decimal(_cents(job.after.total_usd)) - Decimal(_cents(job.before.total_usd))
    cents = to_cents(exact, change)
    return {
        "job_id": job.job_id,
        "efficiency_basis": job.basis,
        "before": _job_period(job.before),
        "after": _job_period(job.after),
        "change": {
            "total_usd": _cents(change),
            **{f"{k}_usd": _cents(v) for k, v in cents.items()},
            "exact": {f"{k}_usd": _exact(v) for k, v in exact.items()},
        },
    }


def change_json(change: ChangeDecomposition) -> dict[str, Any]:
    """The API's document of a decomposition: ``change`` to the cent (use + efficiency +
    price + other = total, exactly), ``exact`` the unrounded parts, ``by_job`` each job's
    own split (largest first, at most ``TOP_ITEMS``; ``others`` the rest)."""
    before, after = change.before, change.after
    cents = change.cents()
    total = sum(cents.values(), Decimal(0))
    ranked = sorted(change.jobs, key=lambda j: (-abs(j.after.total_usd - j.before.total_usd),
                                                j.job_id))  # fmt: skip
    shown, rest = ranked[:TOP_ITEMS], ranked[TOP_ITEMS:]
    notes = [
        "each job is one model's training run, split on its own by the logarithmic mean "
        "Divisia index: use (its work), efficiency (accelerator-hours per unit of work) "
        "and price ($ per accelerator-hour) add up to its change in accelerator cost; "
        "steps of two jobs are never added",
        "accelerator-hours are chip-hours (running hours x accelerators per instance); "
        "other = EBS, checkpoint storage, CPU instances and managed charges",
        "to the cent: each part rounded half to even, the cents left over given to the "
        "largest part, so use + efficiency + price + other = the change in the totals shown",
    ]
    unmeasured = [j.job_id for j in change.jobs if j.basis == "none"]
    if unmeasured:
        notes.append(
            f"no steps or utilization in both periods for {len(unmeasured)} job(s) ("
            + ", ".join(unmeasured[:TOP_ITEMS])
            + (f" and {len(unmeasured) - TOP_ITEMS} more" if len(unmeasured) > TOP_ITEMS else "")
            + "): their efficiency is not measured and their change in accelerator-hours "
            "counts as use"
        )
    if any(j.before.per_instance or j.after.per_instance for j in change.jobs):
        notes.append(
            "a job with an instance type of unknown accelerator count is split on its "
            "instance-hours, and left out of the scope's accelerator-hours"
        )
    return {
        "before": _period_json(before),
        "after": _period_json(after),
        "change": {
            "total_usd": _cents(total),
            **{f"{k}_usd": _cents(v) for k, v in cents.items()},
            "exact": {
                "total_usd": _exact(change.total_change_usd),
                "use_usd": _exact(change.use_usd),
                "efficiency_usd": _exact(change.efficiency_usd),
                "price_usd": _exact(change.price_usd),
                "other_usd": _exact(change.other_change_usd),
            },
            "wasted_usd": money(after.wasted_usd - before.wasted_usd),
            "wasted_idle_usd": money(after.wasted_idle_usd - before.wasted_idle_usd),
            "wasted_rerun_usd": money(after.wasted_rerun_usd - before.wasted_rerun_usd),
        },
        "by_job": [_job_json(j) for j in shown],
        "others": {
            "jobs": len(rest),
            "total_usd": money(
                sum((j.after.total_usd - j.before.total_usd for j in rest), Decimal(0))
            ),
        },
        "efficiency_bases": BASIS_WORDS,
        "notes": notes,
        "estimated": True,
    }
