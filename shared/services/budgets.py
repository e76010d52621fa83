"""Budget evaluation: spend in a scope and period, burn rate, forecasts, and alerts
to finance within a tick of the moment a threshold is crossed.

Runs every minute (a schedule: alerts go out at most a minute after a crossing,
whatever caused it — a running segment's accrual or a closing segment's minimum)
and writes nothing unless it alerts. Each (budget, period, threshold, kind) alerts
once, even with concurrent runs: a conditional write claims it first.
"""

from __future__ import annotations

import logging
import weakref
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from functools import cache
from typing import Any

from shared.adapters.budget_store import BudgetStore
from shared.adapters.job_records import load_job
from shared.adapters.outbox import OutboxStore
from shared.config.budgets import Budget
from shared.config.ledger import LedgerConfig
from shared.domain import accrual as acc
from shared.domain.budgets import period_bounds
from shared.domain.day_split import job_between
from shared.domain.finance_day import calendar_of
from shared.domain.forecast import BudgetForecast, DurationPrior, JobFacts, budget_forecast
from shared.domain.job import rollup_tags
from shared.services.action_deps import ActionDeps
from shared.services.alerts import AlertPoster
from shared.services.budget_actions import run_actions, waiting_actions
from shared.services.budget_alerts import budget_alert, forecast_alert, forecast_id
from shared.services.crossing_timers import plan_timers
from shared.services.deps import LedgerDeps
from shared.services.forecasts import job_facts, sent_forecasts
from shared.services.job_view import all_rollups
from shared.services.launch_denials import lift_orphaned_denials

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
        that needed the job's records is kept for the container's later ticks (booked
        with the rollup store) while no write changed the job's past."""
        key = (job_id, at)
        if key in self._at:
            return self._at[key]
        rollups = self.jobs()[job_id]
        booked = self.deps.rollups.booked_spend(job_id, at, rollups)
        if booked is not None:
            self._at[key] = booked
            return booked
        value, from_records = _spend_at(self.deps, job_id, rollups, at, now)
        if from_records:
            self.deps.rollups.book_spend(job_id, at, rollups, value)
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
    spend_by_job: dict[str, Decimal]
    # The one forecast (shared/domain/forecast.py): API, alerts, CLI and dashboard.
    forecast: BudgetForecast

    @property
    def percent(self) -> Decimal:
        return self.spend * 100 / self.budget.amount_usd

    @property
    def projected_total(self) -> Decimal:
        return self.forecast.total_usd

    @property
    def crossing_100_at(self) -> datetime | None:
        """The central projection's 100 % crossing still ahead (None: crossed or not
        projected in the period)."""
        crossing = self.forecast.crossing(100)
        return crossing.at if crossing is not None else None


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


@cache
def duration_prior() -> DurationPrior:
    """The assumed length of a job without a declared end, chosen by the backtest
    (bench/forecast_backtest.py, docs/forecast.md): as long again, at the median, as it
    is known to have run (built on first use: nothing is built at import)."""
    return DurationPrior(shape="pareto", alpha=1.0, min_hours=1.0)


def budget_status(
    deps: LedgerDeps, config: LedgerConfig, budget: Budget, now: datetime, cache: JobCache
) -> BudgetStatus:
    start, end, key = period_bounds(budget, now, calendar_of(config))
    clock = deps.prices.clock
    spend_by_job: dict[str, Decimal] = {}
    ahead = now + HOUR
    burn = Decimal(0)
    facts: list[JobFacts] = []
    open_jobs: dict[str, tuple[acc.Accrual, Decimal]] = {}
    for job_id, rollups in cache.jobs().items():
        if not in_scope(budget, job_id, rollups, config):
            continue
        accrual = acc.total(acc.from_attributes(r) for r in rollups)
        before = cache.spend_at(job_id, start, now)
        spent = accrual.total_usd(now, clock) - before
        running = accrual.is_open()
        if not (spent or running):
            continue
        spend_by_job[job_id] = spent
        burn += accrual.total_usd(ahead, clock) - accrual.total_usd(now, clock)
        facts.append(
            job_facts(job_id, rollups, running, now, config.budgeting.expected_duration_tag)
        )
        if running:
            open_jobs[job_id] = (accrual, before)

    def spend_at(job_id: str, moment: datetime) -> Decimal:
        if job_id not in open_jobs:
            return spend_by_job[job_id]
        accrual, before = open_jobs[job_id]
        return accrual.total_usd(moment, clock) - before

    projection = budget_forecast(
        facts,
        spend_at,
        budget.amount_usd,
        budget.thresholds if 100 in budget.thresholds else (*budget.thresholds, 100),
        (start, end),
        duration_prior(),
        now,
    )
    return BudgetStatus(
        budget,
        key,
        start,
        end,
        sum(spend_by_job.values(), Decimal(0)),
        burn,
        spend_by_job,
        projection,
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


def _next_change(status: BudgetStatus, now: datetime) -> datetime:
    """With no new event the forecast holds until ``revises_at``, and the spend follows
    its central curve until then: the next alert is due at the next projected crossing,
    a revision of the forecast, or the period's end."""
    candidates = [now + QUIET_CAP]
    if status.period_end is not None:
        candidates.append(status.period_end)
    projection = status.forecast
    if projection.revises_at is not None:
        candidates.append(projection.revises_at)
    candidates.extend(
        c.at for c in projection.crossings if c.state == "projected" and c.at is not None
    )
    return min(candidates) - QUIET_MARGIN


# Per container: when the denials of removed budgets were last looked for (an hourly
# Query of one small partition, not one per tick).
_orphans_checked: weakref.WeakKeyDictionary[object, datetime] = weakref.WeakKeyDictionary()
ORPHANS_EVERY = timedelta(hours=1)


def _lift_orphans(budgets: list[Budget], now: datetime, acts: ActionDeps) -> list[str]:
    last = _orphans_checked.get(acts.store.table)
    if last is not None and last <= now < last + ORPHANS_EVERY:
        return []
    _orphans_checked[acts.store.table] = now
    deny_budgets = {b.budget_id for b in budgets if any(a.do == "deny_launch" for a in b.actions)}
    try:
        return lift_orphaned_denials(deny_budgets, now, acts)
    except Exception:  # never holds up the budgets' own evaluation
        logger.exception("denials of removed budgets not lifted: the next pass tries again")
        return []


def evaluate_budgets(
    deps: LedgerDeps,
    store: BudgetStore,
    config: LedgerConfig,
    now: datetime,
    acts: ActionDeps | None = None,
    only: str | None = None,
) -> Evaluation:
    """Record an alert for every threshold crossed and every forecast over budget, once
    each, in the outbox; no SNS call (the re-send path sends them). Each budget is
    evaluated on its own: one that fails is logged with its id and the rest go on."""
    sent = []
    poster = AlertPoster(OutboxStore(deps.table))
    cache = JobCache(deps)
    next_midnight = calendar_of(config).next_day_start(now)  # the finance day's end
    quiet_until = min(now + QUIET_CAP, next_midnight)  # the daily anomaly check
    every = effective_budgets(store, config)
    if acts is not None and only is None:
        sent += [f"action:{a}" for a in _lift_orphans(every, now, acts)]
    budgets = [b for b in every if only in (None, b.budget_id)]
    if not budgets:
        return Evaluation(sent, next_midnight, quiet_regardless_of_events=True)
    failed: list[str] = []
    for budget in budgets:
        try:
            alerted, next_change = _evaluate(deps, config, budget, now, cache, poster, acts)
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
    acts: ActionDeps | None = None,
) -> tuple[list[str], datetime]:
    """One budget: the alerts it recorded (and its actions), and when it may next change."""
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
    next_change = _next_change(status, now)
    if acts is not None:
        if budget.actions:
            sent += [f"action:{a}" for a in run_actions(deps, status, now, poster, acts)]
            if waiting_actions(status, acts):  # a checkpoint may complete: each tick
                next_change = min(next_change, now + timedelta(minutes=1))
        next_change = min(next_change, plan_timers(deps, status, now, acts))
    return sent, next_change
