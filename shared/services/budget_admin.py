"""Budget administration for the API: where each budget comes from, a budget's state in
its current period, and a change recorded with who made it."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from shared.config.budgets import Budget
from shared.domain.budgets import period_bounds
from shared.domain.finance_day import calendar_of
from shared.domain.forecast import BudgetForecast
from shared.reports.formatting import iso, money
from shared.services.budgets import JobCache, budget_status

if TYPE_CHECKING:
    from shared.adapters.budget_store import BudgetStore
    from shared.config.ledger import LedgerConfig
    from shared.services.deps import LedgerDeps


def budget_sources(config: LedgerConfig, stored: dict[str, Budget | None]) -> dict[str, str]:
    """Where each budget in effect comes from: CDK context or the API (which overrides
    or deletes a context budget of the same id)."""
    sources = {b.budget_id: "context" for b in config.budgets}
    for budget_id, budget in stored.items():
        if budget is None:
            sources.pop(budget_id, None)
        else:
            sources[budget_id] = "api"
    return sources


def budget_state(
    deps: LedgerDeps,
    config: LedgerConfig,
    budget: Budget,
    source: str,
    now: datetime,
    cache: JobCache | None = None,
) -> dict[str, Any]:
    """The budget as defined, its source, and its spend and projection in the period
    containing ``now`` (``cache``: every job's rollups read once for many budgets)."""
    status = budget_status(deps, config, budget, now, cache or JobCache(deps))
    period_start, period_end, _ = period_bounds(budget, now, calendar_of(config))
    return {
        **budget.model_dump(mode="json"),
        "source": source,
        "period_key": status.period_key,
        "period_start": iso(period_start),
        "period_end": iso(period_end),
        "spend_usd": money(status.spend),
        "percent": f"{status.percent:.2f}",
        "burn_rate_usd_per_hour": money(status.burn_per_hour),
        **forecast_fields(status.forecast),
        "spend_by_job": {k: money(v) for k, v in sorted(status.spend_by_job.items())},
    }


def forecast_fields(forecast: BudgetForecast) -> dict[str, Any]:
    """The forecast as the API gives it: the stable top-level figures and the whole."""
    hundred = forecast.crossing(100)
    high = hundred.high_at if hundred is not None and hundred.state == "possible" else None
    return {
        "projected_total_usd": money(forecast.total_usd),
        "projected_low_usd": money(forecast.low_usd),
        "projected_high_usd": money(forecast.high_usd),
        "projected_until": iso(forecast.until),
        "crossing_100_at": iso(hundred.at) if hundred is not None else None,
        "high_crossing_at": iso(high),
        "forecast": {
            "total_usd": money(forecast.total_usd),
            "low_usd": money(forecast.low_usd),
            "high_usd": money(forecast.high_usd),
            "until": iso(forecast.until),
            "range": forecast.range_meaning,
            "assumption": forecast.assumption,
            "revises_at": iso(forecast.revises_at),
            "crossings": [
                {
                    "threshold": c.threshold,
                    "amount_usd": money(c.amount_usd),
                    "state": c.state,
                    "at": iso(c.at),
                    "high_at": iso(c.high_at),
                }
                for c in forecast.crossings
            ],
            "jobs": [
                {
                    "job_id": j.job_id,
                    "method": j.method,
                    "end": iso(j.end),
                    "low_end": iso(j.low_end),
                    "high_end": iso(j.high_end),
                    "known_hours": j.known_hours,
                    "declared_hours": str(j.declared_hours) if j.declared_hours else None,
                    "past_declared_end": j.past_declared_end,
                }
                for j in forecast.jobs
            ],
        },
    }


def record_change(
    store: BudgetStore,
    who: str,
    role: str,
    budget_id: str,
    before: Budget | None,
    after: Budget | None,
    now: datetime,
) -> None:
    """Set (``after``) or delete (None) a stored budget, recording the change."""
    change = {
        "at": iso(now),
        "who": who,
        "role": role,
        "action": "delete" if after is None else ("create" if before is None else "update"),
        "before": before.model_dump(mode="json") if before is not None else None,
        "after": after.model_dump(mode="json") if after is not None else None,
    }
    store.put_budget_change(budget_id, after, change)
