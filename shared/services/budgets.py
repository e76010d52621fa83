"""Budget evaluation: spend in a scope and period, burn rate, forecasts, and alerts
to finance within a tick of the moment a threshold is crossed.

Runs every minute (a schedule: alerts go out at most a minute after a crossing,
whatever caused it — a running segment's accrual or a closing segment's minimum)
and writes nothing unless it alerts. Each (budget, period, threshold, kind) alerts
once, even with concurrent runs: a conditional write claims it first.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from shared.adapters.budget_store import BudgetStore
from shared.adapters.job_records import load_job
from shared.adapters.outbox import OutboxStore
from shared.adapters.rollup_store import PAST_CHANGES
from shared.config.budgets import Budget
from shared.config.ledger import LedgerConfig
from shared.domain import accrual as acc
from shared.domain.budgets import period_bounds
from shared.domain.day_split import job_between
from shared.domain.finance_day import calendar_of
from shared.domain.job import rollup_tags
from shared.services.alerts import AlertPoster
from shared.services.budget_alerts import budget_alert, forecast_alert, forecast_id
from shared.services.deps import LedgerDeps
from shared.services.forecasts import (
    Forecast,
    forecast,
    project_job,
    revision_possible,
    sent_forecasts,
)
from shared.services.job_view import all_rollups

HOUR = timedelta(hours=1)
logger = logging.getLogger("costtracker.budgets")


def effective_budgets(
    store: BudgetStore, config: LedgerConfig, stored_budgets: dict[str, Budget | None] | None = None
) -> list[Budget]:
    """Context budgets, overridden (or removed) by the ones set through the API."""
    budgets = {b.budget_id: b for b in config.budgets}
    if stored_budgets is None:
        stored_budgets = store.stored_budgets()
    for budget_id, stored in stored_budgets.items():
        if stored is None:
            budgets.pop(budget_id, None)
        else:
            budgets[budget_id] = stored
    return [budgets[k] for k in sorted(budgets)]


# Books kept per container at most (a day's period starts for every job, and more).
MAX_BOOKS = 50_000


@dataclass
class JobCache:
    """Every job's rollups, read once per evaluation run (one Query) and shared by every
    budget; a job's spend at a past moment is computed once per run."""

    deps: LedgerDeps
    rollups: dict[str, list[dict[str, Any]]] | None = None
    _at: dict[tuple[str, datetime], Decimal] = field(default_factory=dict)

    def jobs(self) -> dict[str, list[dict[str, Any]]]:
        if self.rollups is None:
            self.rollups = all_rollups(self.deps.rollups)
        return self.rollups

    def spend_at(self, job_id: str, at: datetime, now: datetime) -> Decimal:
        """The job's total accrued up to ``at`` (<= now), as known at ``now``. A figure
        that needed the job's records is kept for the container's later ticks (the
        rollup store's ``books``) while no write changed the job's past."""
        key = (job_id, at)
        if key in self._at:
            return self._at[key]
        rollups = self.jobs()[job_id]
        stamp = tuple(
            sorted((str(r.get("account", "")), int(r.get(PAST_CHANGES, 0))) for r in rollups)
        )
        books = self.deps.rollups.books
        booked = books.get(key)
        if booked is not None and booked[0] == stamp:
            self._at[key] = booked[1]
            return booked[1]
        value, from_records = _spend_at(self.deps, job_id, rollups, at, now)
        if from_records:
            if len(books) >= MAX_BOOKS:
                books.clear()
            books[key] = (stamp, value)
        self._at[key] = value
        return value


def _spend_at(
    deps: LedgerDeps, job_id: str, rollups: list[dict[str, Any]], at: datetime, now: datetime
) -> tuple[Decimal, bool]:
    """(J(at), whether the job's records were read): from the rollups' formula when
    nothing happened to the job after ``at`` (the formula then holds back to ``at``);
    else the job's total now less what its records accrued inside (at, now] (one Query
    of its partition)."""
    firsts = [str(r.get("first_event_at", "")) for r in rollups if r.get("first_event_at")]
    if firsts and datetime.fromisoformat(min(firsts)) >= at:
        return Decimal(0), False
    lasts = [str(r.get("last_event_at", "")) for r in rollups if r.get("last_event_at")]
    accrual = acc.total(acc.from_attributes(r) for r in rollups)
    if not lasts or datetime.fromisoformat(max(lasts)) < at:
        return accrual.total_usd(at, deps.prices.clock), False
    records = load_job(deps.table, deps.rollups, job_id, since=at)
    if records is None:
        return Decimal(0), True
    inside, _ = job_between(records, at, now, now, deps.prices.series)
    return accrual.total_usd(now, deps.prices.clock) - inside["total"], True


@dataclass(frozen=True)
class BudgetStatus:
    budget: Budget
    period_key: str
    period_start: datetime
    period_end: datetime | None
    spend: Decimal
    burn_per_hour: Decimal
    projected_total: Decimal
    projected_until: datetime
    crossing_100_at: datetime | None
    spend_by_job: dict[str, Decimal]
    # The projection (declared ends, else each job's run pattern): see forecasts.py.
    forecast: Forecast | None = None

    @property
    def percent(self) -> Decimal:
        return self.spend * 100 / self.budget.amount_usd


def in_scope(
    budget: Budget, job_id: str, rollups: list[dict[str, Any]], config: LedgerConfig
) -> bool:
    scope = budget.scope
    if scope.job is not None:
        return job_id == scope.job
    if scope.account:
        return True
    tags, _ = rollup_tags(rollups)
    job_keys = {k: job_id for k in config.tracking.job_tag_keys}
    merged = {**job_keys, **tags}
    return all(merged.get(k) == v for k, v in (scope.tag or {}).items())


def budget_status(
    deps: LedgerDeps, config: LedgerConfig, budget: Budget, now: datetime, cache: JobCache
) -> BudgetStatus:
    start, end, key = period_bounds(budget, now, calendar_of(config))
    clock = deps.prices.clock
    spend_by_job: dict[str, Decimal] = {}
    ahead = now + HOUR
    burn = Decimal(0)
    projections = []
    for job_id, rollups in cache.jobs().items():
        if not in_scope(budget, job_id, rollups, config):
            continue
        accrual = acc.total(acc.from_attributes(r) for r in rollups)
        spent = accrual.total_usd(now, clock) - cache.spend_at(job_id, start, now)
        if spent or accrual.is_open():
            spend_by_job[job_id] = spent
        burn += accrual.total_usd(ahead, clock) - accrual.total_usd(now, clock)
        if accrual.is_open():
            projections.append(
                project_job(
                    job_id, rollups, accrual, now, end, config.budgeting.expected_duration_tag
                )
            )
    spend = sum(spend_by_job.values(), Decimal(0))
    projected = forecast(
        spend,
        budget.amount_usd,
        sorted(projections, key=lambda p: p.job_id),
        now,
        lambda accrual, at: accrual.total_usd(at, clock),
    )
    crossing = None
    if spend < budget.amount_usd and burn > 0:
        hours = (budget.amount_usd - spend) / burn
        crossing = now + timedelta(seconds=float(hours * 3600))
    return BudgetStatus(
        budget,
        key,
        start,
        end,
        spend,
        burn,
        projected.total,
        projected.until,
        crossing,
        spend_by_job,
        projected,
    )


@dataclass(frozen=True)
class Evaluation:
    sent: list[str]
    # Until this moment no alert can fire unless an event changes the spend curve:
    # the next crossing at the current burn rate, less a safety margin, and never past
    # a period boundary or an hour from now. The deployed schedule runs every minute
    # regardless; the local replay skips the ticks before it (identical alerts).
    quiet_until: datetime
    # True when no event can bring the quiet moment forward (there are no budgets).
    quiet_regardless_of_events: bool = False
    # Budgets whose evaluation raised (logged with their ids; the others went on).
    failed: list[str] = field(default_factory=list)


QUIET_MARGIN = timedelta(minutes=2)
QUIET_CAP = timedelta(hours=1)


def _next_change(
    status: BudgetStatus, now: datetime, sent: tuple[int, datetime | None]
) -> datetime:
    budget = status.budget
    candidates = [now + QUIET_CAP]
    if status.period_end is not None:
        candidates.append(status.period_end)
    if status.burn_per_hour > 0:
        for threshold in budget.thresholds:
            target = budget.amount_usd * threshold / 100
            if status.spend < target:
                hours = (target - status.spend) / status.burn_per_hour
                candidates.append(now + timedelta(seconds=float(hours * 3600)))
                break
    projection = status.forecast
    if projection is not None and status.spend < budget.amount_usd:
        # A declared end passed changes how a job is projected.
        candidates.extend(projection.declared_ends(now))
        if projection.by_run_pattern and status.burn_per_hour > 0:
            if status.projected_total <= budget.amount_usd:
                # Run-pattern ends move out with the clock: the projection rises at most
                # twice the burn rate.
                gap = (budget.amount_usd - status.projected_total) / (2 * status.burn_per_hour)
                candidates.append(now + timedelta(seconds=float(gap * 3600)))
            elif revision_possible(sent, status.crossing_100_at):
                return now + timedelta(minutes=1)  # the crossing may move earlier: each tick
    return min(candidates) - QUIET_MARGIN


def evaluate_budgets(
    deps: LedgerDeps, store: BudgetStore, config: LedgerConfig, now: datetime
) -> Evaluation:
    """Record an alert for every threshold crossed and every forecast over budget, once
    each, in the outbox; no SNS call (the re-send path sends them). Each budget is
    evaluated on its own: one that fails is logged with its id and the rest go on."""
    sent = []
    poster = AlertPoster(OutboxStore(deps.table))
    cache = JobCache(deps)
    next_midnight = calendar_of(config).next_day_start(now)  # the finance day's end
    quiet_until = min(now + QUIET_CAP, next_midnight)  # the daily anomaly check
    budgets = effective_budgets(store, config)
    if not budgets:
        return Evaluation([], next_midnight, quiet_regardless_of_events=True)
    failed: list[str] = []
    for budget in budgets:
        try:
            alerted, next_change = _evaluate(deps, config, budget, now, cache, poster)
        except Exception:
            logger.exception("budget not evaluated", extra={"budget_id": budget.budget_id})
            failed.append(budget.budget_id)
            quiet_until = now + timedelta(minutes=1)  # try it again at the next tick
            continue
        sent += alerted
        quiet_until = min(quiet_until, next_change)
    return Evaluation(sent, max(quiet_until, now), quiet_regardless_of_events=False, failed=failed)


def _evaluate(
    deps: LedgerDeps,
    config: LedgerConfig,
    budget: Budget,
    now: datetime,
    cache: JobCache,
    poster: AlertPoster,
) -> tuple[list[str], datetime]:
    """One budget: the alerts it recorded and when it may next change."""
    sent = []
    status = budget_status(deps, config, budget, now, cache)
    for threshold in budget.thresholds:
        if status.spend * 100 < budget.amount_usd * threshold:
            continue
        if poster.record(budget_alert(status, threshold, now), now) != "known":
            sent.append(f"{budget.budget_id}:{threshold}")
    over = status.projected_total > budget.amount_usd > status.spend
    forecasts = sent_forecasts(poster.outbox, forecast_id(status)) if over else (0, None)
    to_post = forecast_alert(status, now, forecasts) if over else None
    if to_post is not None and poster.record(to_post, now) != "known":
        sent.append(f"{budget.budget_id}:forecast")
        forecasts = sent_forecasts(poster.outbox, forecast_id(status))
    return sent, _next_change(status, now, forecasts)
