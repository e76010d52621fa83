"""Spend anomalies: once a day, yesterday's spend in each budget's scope against its
trailing 7-day mean."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from decimal import Decimal

from shared.adapters.budget_store import BudgetStore
from shared.adapters.notify import Alert
from shared.adapters.outbox import OutboxStore
from shared.config.budgets import Budget
from shared.config.ledger import LedgerConfig
from shared.domain.finance_day import calendar_of
from shared.reports.formatting import cents, iso
from shared.services.alerts import AlertPoster
from shared.services.budget_alerts import scope_attributes
from shared.services.budgets import JobCache, effective_budgets, in_scope
from shared.services.deps import LedgerDeps


def day_spend(
    deps: LedgerDeps,
    config: LedgerConfig,
    budget: Budget,
    day: date,
    now: datetime,
    cache: JobCache,
) -> Decimal:
    start, day_end = calendar_of(config).bounds(day)  # the finance day
    end = min(day_end, now)
    total = Decimal(0)
    for job_id, rollups in cache.jobs().items():
        if in_scope(budget, job_id, rollups, config):
            total += cache.spend_at(job_id, end, now) - cache.spend_at(job_id, start, now)
    return total


def check_anomalies(
    deps: LedgerDeps, store: BudgetStore, config: LedgerConfig, now: datetime
) -> list[str]:
    """Once a day: yesterday's spend in each budget's scope against its trailing 7-day
    mean; above ``anomaly_multiple`` times it (with enough history) is an anomaly,
    recorded in the outbox (the re-send path sends it)."""
    yesterday = calendar_of(config).day_of(now) - timedelta(days=1)
    cache = JobCache(deps)
    sent = []
    poster = AlertPoster(OutboxStore(deps.table))
    settings = config.budgeting
    for budget in effective_budgets(store, config):
        spend = day_spend(deps, config, budget, yesterday, now, cache)
        history = [
            day_spend(deps, config, budget, yesterday - timedelta(days=n), now, cache)
            for n in range(1, 8)
        ]
        # History starts at the scope's first day with spend within the trailing week.
        first = max((n for n, h in enumerate(history) if h > 0), default=None)
        if first is None or first + 1 < settings.anomaly_min_history_days:
            continue
        known = history[: first + 1]
        mean = sum(known, Decimal(0)) / len(known)
        if mean <= 0 or spend <= mean * settings.anomaly_multiple:
            continue
        subject = (
            f"Anomaly: {budget.scope.describe()} spent {cents(spend)} on {yesterday}, "
            f"{spend / mean:.1f}x its 7-day mean of {cents(mean)}"
        )
        alert = Alert(
            "finance",
            "anomaly",
            subject,
            subject,
            {
                "budget_id": budget.budget_id,
                "severity": "warning",
                **scope_attributes(budget),
            },
            alert_id=f"anomaly:{budget.budget_id}:{yesterday.isoformat()}",
            at=iso(now) or "",
        )
        if poster.record(alert, now) != "known":
            sent.append(f"{budget.budget_id}:anomaly")
    return sent
