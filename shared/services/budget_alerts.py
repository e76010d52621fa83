"""The budget and forecast alerts to finance: subject, body, and the attributes that
subscriptions filter on (scope tags and recipients)."""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING

from shared.adapters.notify import Alert
from shared.config.budgets import Budget
from shared.domain.forecast import RANGE_MEANING, Crossing
from shared.domain.limits import TOP_ITEMS
from shared.reports.formatting import cents, iso
from shared.services.forecasts import forecast_revision

if TYPE_CHECKING:
    from shared.services.budgets import BudgetStatus


def scope_attributes(budget: Budget) -> dict[str, str]:
    """Scope tags, and the recipients (a JSON list) their email subscriptions filter on."""
    tags = budget.scope.tag or {}
    recipients = sorted({e.lower() for e in budget.recipients})
    return {
        **{k: tags.get(k, "") for k in ("project", "team", "cost-center")},
        "recipients": json.dumps(recipients) if recipients else "",
    }


def alert_body(status: BudgetStatus, headline: str) -> str:
    """The body names the largest jobs (``TOP_ITEMS``) and sums up the rest: its size
    does not grow with the jobs in scope (the rest are in ``GET /budgets/{id}``)."""
    budget = status.budget
    lines = [
        headline,
        f"Scope: {budget.scope.describe()}; period: {budget.period} ({status.period_key}).",
        f"Spend so far: {cents(status.spend)} of {cents(budget.amount_usd)} "
        f"({status.percent:.1f} %). Burn rate: {cents(status.burn_per_hour)}/h.",
        *forecast_lines(status),
        "Spend by job:",
    ]
    ranked = sorted(status.spend_by_job.items(), key=lambda kv: -kv[1])
    for job_id, spend in ranked[:TOP_ITEMS]:
        lines.append(f"  {job_id}: {cents(spend)}")
    if len(ranked) > TOP_ITEMS:
        rest = sum((spend for _, spend in ranked[TOP_ITEMS:]), Decimal(0))
        lines.append(
            f"  and {len(ranked) - TOP_ITEMS} more, {cents(rest)} "
            f"(every job: GET /budgets/{budget.budget_id})"
        )
    lines.append(
        "Figures are estimates from live EC2/S3 events priced with list, spot or configured "
        "rates (see GET /jobs/{job_id} for each rate's source); the bill confirms them later."
    )
    return "\n".join(lines)


def crossing_text(crossing: Crossing | None) -> str:
    """One threshold's moment as every view words it."""
    if crossing is None or crossing.state == "not_projected":
        return "not projected in the period"
    if crossing.state == "crossed":
        return "already crossed"
    if crossing.state == "possible":
        return f"not projected; the range's high end crosses it at {iso(crossing.high_at)}"
    return f"projected at {iso(crossing.at)}"


def forecast_lines(status: BudgetStatus) -> list[str]:
    """The forecast: its total and range, each threshold, and how each running job was
    projected (the ``TOP_ITEMS`` largest spenders, then how many more)."""
    projection = status.forecast
    lines = [
        f"Forecast for the period: {cents(projection.total_usd)} (range "
        f"{cents(projection.low_usd)} to {cents(projection.high_usd)}, {RANGE_MEANING}), "
        f"to {iso(projection.until)}.",
    ]
    for crossing in projection.crossings:
        lines.append(f"  {crossing.threshold} %: {crossing_text(crossing)}")
    running = projection.jobs
    if not running:
        return [*lines, "How it was projected: nothing in scope is running; no further spend."]
    lines.append(
        f"How it was projected (each running job at its current burn; {projection.assumption}):"
    )
    spend = status.spend_by_job
    largest = sorted(running, key=lambda p: (-spend.get(p.job_id, Decimal(0)), p.job_id))
    shown = {p.job_id for p in largest[:TOP_ITEMS]}
    lines.extend(f"  {p.describe()}" for p in running if p.job_id in shown)
    if len(running) > TOP_ITEMS:
        lines.append(
            f"  and {len(running) - TOP_ITEMS} more running jobs, projected the same way "
            f"(GET /budgets/{status.budget.budget_id})"
        )
    return lines


def budget_alert(status: BudgetStatus, threshold: int, now: datetime) -> Alert:
    budget = status.budget
    subject = (
        f"Budget {budget.budget_id} at {threshold} %: {cents(status.spend)} of "
        f"{cents(budget.amount_usd)}"
    )
    severity = "critical" if threshold >= 100 else "warning" if threshold >= 80 else "info"
    attributes = {
        "budget_id": budget.budget_id,
        "threshold": str(threshold),
        "severity": severity,
        **scope_attributes(budget),
    }
    return Alert(
        "finance",
        "budget",
        subject,
        alert_body(status, subject),
        attributes,
        alert_id=f"budget:{budget.budget_id}:{status.period_key}:{threshold}",
        at=iso(now) or "",
    )


def forecast_id(status: BudgetStatus) -> str:
    return f"forecast:{status.budget.budget_id}:{status.period_key}"


def forecast_alert(
    status: BudgetStatus, now: datetime, sent: tuple[int, datetime | None]
) -> Alert | None:
    """The forecast alert to post, or None when it would say nothing new (a forecast
    for this period was sent and the projected crossing is not an hour earlier)."""
    budget = status.budget
    projected_crossing = status.crossing_100_at  # the central projection's, as in the body
    alert_id = forecast_revision(sent, forecast_id(status), projected_crossing)
    if alert_id is None:
        return None
    crossing = iso(projected_crossing) or "n/a"
    subject = (
        f"Forecast: budget {budget.budget_id} heads for {cents(status.projected_total)} of "
        f"{cents(budget.amount_usd)} (100 % at {crossing})"
    )
    attributes = {
        "budget_id": budget.budget_id,
        "threshold": "100",
        "severity": "warning",
        "projected_total_usd": str(status.projected_total.quantize(Decimal("0.01"))),
        "projected_low_usd": str(status.forecast.low_usd.quantize(Decimal("0.01"))),
        "projected_high_usd": str(status.forecast.high_usd.quantize(Decimal("0.01"))),
        "projected_crossing_at": crossing,
        **scope_attributes(budget),
    }
    return Alert(
        "finance",
        "forecast",
        subject,
        alert_body(status, subject),
        attributes,
        alert_id=alert_id,
        at=iso(now) or "",
    )
