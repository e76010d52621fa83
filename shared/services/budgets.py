"""Budget evaluation: spend in a scope and period, burn rate, forecasts, and alerts
to finance within a tick of the moment a threshold is crossed.

Runs every minute (a schedule: alerts go out at most a minute after a crossing,
whatever caused it — a running segment's accrual or a closing segment's minimum)
and writes nothing unless it alerts. Each (budget, period, threshold, kind) alerts
once, even with concurrent runs: a conditional write claims it first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from shared.budgets import Budget, period_bounds
from shared.config import LedgerConfig
from shared.costing import job_tags, spend_between
from shared.ledger import JobItems, Ledger
from shared.notify import Alert, Notifier
from shared.services.jobs import jobs_active_between
from shared.views import cents, iso

HOUR = timedelta(hours=1)
CLAIM_TTL = timedelta(days=400)


def effective_budgets(
    ledger: Ledger, config: LedgerConfig, stored_budgets: dict[str, Budget | None] | None = None
) -> list[Budget]:
    """Context budgets, overridden (or removed) by the ones set through the API."""
    budgets = {b.budget_id: b for b in config.budgets}
    if stored_budgets is None:
        stored_budgets = ledger.stored_budgets()
    for budget_id, stored in stored_budgets.items():
        if stored is None:
            budgets.pop(budget_id, None)
        else:
            budgets[budget_id] = stored
    return [budgets[k] for k in sorted(budgets)]


@dataclass
class JobCache:
    """Job items read once per evaluation run, shared by every budget."""

    ledger: Ledger
    items: dict[str, JobItems | None] = field(default_factory=dict)

    def get(self, job_id: str) -> JobItems | None:
        if job_id not in self.items:
            self.items[job_id] = self.ledger.job_items(job_id)
        return self.items[job_id]


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

    @property
    def percent(self) -> Decimal:
        return self.spend * 100 / self.budget.amount_usd


def _candidates(ledger: Ledger, budget: Budget, first: date, last: date) -> list[str]:
    scope = budget.scope
    if scope.job is not None:
        return [scope.job]
    for key in ("project", "team"):
        if scope.tag and key in scope.tag:
            return ledger.jobs_by_tag(key, scope.tag[key], first, last)
    return jobs_active_between(ledger, max(first, last - timedelta(days=92)), last)


def _in_scope(budget: Budget, items: JobItems, config: LedgerConfig) -> bool:
    if budget.scope.job is not None or budget.scope.account:
        return True
    tags, _ = job_tags(items.instances, config.tracking.grouping_tag_keys)
    job_tag_values = {
        key: value
        for r in items.instances
        for key, value in r.profile.tags.items()
        if key in config.tracking.job_tag_keys
    }
    merged = {**job_tag_values, **tags}
    return all(merged.get(k) == v for k, v in (budget.scope.tag or {}).items())


def _expected_end(items: JobItems, tag: str) -> datetime | None:
    starts = [t.at for r in items.instances for t in r.transitions if t.state == "running"]
    for record in items.instances:
        value = record.profile.tags.get(tag, "").strip()
        try:
            hours = Decimal(value)
        except ArithmeticError:
            continue
        if hours > 0 and starts:
            return min(starts) + timedelta(seconds=float(hours * 3600))
    return None


def budget_status(
    ledger: Ledger, config: LedgerConfig, budget: Budget, now: datetime, cache: JobCache
) -> BudgetStatus:
    start, end, key = period_bounds(budget, now)
    first = start.date()
    jobs = []
    for job_id in _candidates(ledger, budget, first, now.date()):
        items = cache.get(job_id)
        if items is not None and items.instances and _in_scope(budget, items, config):
            jobs.append(items)
    spend_by_job = {
        items.job_id: spend_between(items.instances, items.checkpoints, start, now, now)
        for items in jobs
    }
    spend = sum(spend_by_job.values(), Decimal(0))
    ahead = now + HOUR
    burn = (
        sum(
            (spend_between(i.instances, i.checkpoints, start, ahead, ahead) for i in jobs),
            Decimal(0),
        )
        - spend
    )
    if end is not None:
        horizon = end
    else:
        declared = [
            e
            for e in (_expected_end(i, config.budgeting.expected_duration_tag) for i in jobs)
            if e is not None
        ]
        horizon = (
            max([*declared, now])
            if declared
            else (now + timedelta(hours=config.budgeting.forecast_horizon_hours))
        )
    horizon = max(horizon, now)
    projected = sum(
        (spend_between(i.instances, i.checkpoints, start, horizon, horizon) for i in jobs),
        Decimal(0),
    )
    crossing = None
    if spend < budget.amount_usd and burn > 0:
        hours = (budget.amount_usd - spend) / burn
        crossing = now + timedelta(seconds=float(hours * 3600))
    return BudgetStatus(
        budget, key, start, end, spend, burn, projected, horizon, crossing, spend_by_job
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


QUIET_MARGIN = timedelta(minutes=2)
QUIET_CAP = timedelta(hours=1)


def _next_change(status: BudgetStatus, now: datetime) -> datetime:
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
        if status.period_end is None and status.projected_total <= budget.amount_usd:
            # A rolling horizon moves with the clock: the projection rises at the burn rate.
            hours = (budget.amount_usd - status.projected_total) / status.burn_per_hour
            candidates.append(now + timedelta(seconds=float(hours * 3600)))
    return min(candidates) - QUIET_MARGIN


def evaluate_budgets(
    ledger: Ledger, config: LedgerConfig, notifier: Notifier, now: datetime
) -> Evaluation:
    """Alert every threshold crossed and every forecast over budget, once each."""
    sent = []
    cache = JobCache(ledger)
    next_midnight = datetime(now.year, now.month, now.day, tzinfo=UTC) + timedelta(days=1)
    quiet_until = min(now + QUIET_CAP, next_midnight)  # the daily anomaly check
    budgets = effective_budgets(ledger, config)
    if not budgets:
        return Evaluation([], next_midnight, quiet_regardless_of_events=True)
    for budget in budgets:
        status = budget_status(ledger, config, budget, now, cache)
        quiet_until = min(quiet_until, _next_change(status, now))
        for threshold in budget.thresholds:
            if status.spend * 100 < budget.amount_usd * threshold:
                continue
            claim = f"budget#{budget.budget_id}#{status.period_key}#{threshold}#budget"
            if ledger.claim_once(claim, now + CLAIM_TTL):
                notifier.send(_budget_alert(status, threshold, now))
                sent.append(f"{budget.budget_id}:{threshold}")
        over = status.projected_total > budget.amount_usd > status.spend
        if over and ledger.claim_once(
            f"budget#{budget.budget_id}#{status.period_key}#forecast", now + CLAIM_TTL
        ):
            notifier.send(_forecast_alert(status, now))
            sent.append(f"{budget.budget_id}:forecast")
    return Evaluation(sent, max(quiet_until, now), quiet_regardless_of_events=False)


def _scope_attributes(budget: Budget) -> dict[str, str]:
    tags = budget.scope.tag or {}
    return {k: tags.get(k, "") for k in ("project", "team", "cost-center")}


def _body(status: BudgetStatus, headline: str) -> str:
    budget = status.budget
    lines = [
        headline,
        f"Scope: {budget.scope.describe()}; period: {budget.period} ({status.period_key}).",
        f"Spend so far: {cents(status.spend)} of {cents(budget.amount_usd)} "
        f"({status.percent:.1f} %). Burn rate: {cents(status.burn_per_hour)}/h.",
    ]
    if status.crossing_100_at is not None:
        lines.append(f"At this rate 100 % is crossed at {iso(status.crossing_100_at)}.")
    lines.append(f"Projected by {iso(status.projected_until)}: {cents(status.projected_total)}.")
    lines.append("Spend by job:")
    for job_id, spend in sorted(status.spend_by_job.items(), key=lambda kv: -kv[1]):
        lines.append(f"  {job_id}: {cents(spend)}")
    lines.append(
        "Figures are estimates from live EC2/S3 events priced with list, spot or configured "
        "rates (see GET /jobs/{job_id} for each rate's source); the bill confirms them later."
    )
    return "\n".join(lines)


def _budget_alert(status: BudgetStatus, threshold: int, now: datetime) -> Alert:
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
        "at": iso(now) or "",
        **_scope_attributes(budget),
    }
    return Alert("finance", "budget", subject, _body(status, subject), attributes)


def _forecast_alert(status: BudgetStatus, now: datetime) -> Alert:
    budget = status.budget
    crossing = iso(status.crossing_100_at) or "n/a"
    subject = (
        f"Forecast: budget {budget.budget_id} heads for {cents(status.projected_total)} of "
        f"{cents(budget.amount_usd)} (100 % at {crossing})"
    )
    attributes = {
        "budget_id": budget.budget_id,
        "threshold": "100",
        "severity": "warning",
        "at": iso(now) or "",
        "projected_total_usd": str(status.projected_total.quantize(Decimal("0.01"))),
        "projected_crossing_at": crossing,
        **_scope_attributes(budget),
    }
    return Alert("finance", "forecast", subject, _body(status, subject), attributes)


def day_spend(
    ledger: Ledger,
    config: LedgerConfig,
    budget: Budget,
    day: date,
    now: datetime,
    cache: JobCache,
) -> Decimal:
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    end = start + timedelta(days=1)
    total = Decimal(0)
    for job_id in _candidates(ledger, budget, day, day):
        items = cache.get(job_id)
        if items is not None and items.instances and _in_scope(budget, items, config):
            total += spend_between(items.instances, items.checkpoints, start, min(end, now), now)
    return total


def check_anomalies(
    ledger: Ledger, config: LedgerConfig, notifier: Notifier, now: datetime
) -> list[str]:
    """Once a day: yesterday's spend in each budget's scope against its trailing 7-day
    mean; above ``anomaly_multiple`` times it (with enough history) is an anomaly."""
    yesterday = now.date() - timedelta(days=1)
    cache = JobCache(ledger)
    sent = []
    settings = config.budgeting
    for budget in effective_budgets(ledger, config):
        spend = day_spend(ledger, config, budget, yesterday, now, cache)
        history = [
            day_spend(ledger, config, budget, yesterday - timedelta(days=n), now, cache)
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
        if not ledger.claim_once(f"anomaly#{budget.budget_id}#{yesterday}", now + CLAIM_TTL):
            continue
        subject = (
            f"Anomaly: {budget.scope.describe()} spent {cents(spend)} on {yesterday}, "
            f"{spend / mean:.1f}x its 7-day mean of {cents(mean)}"
        )
        notifier.send(
            Alert(
                "finance",
                "anomaly",
                subject,
                subject,
                {
                    "budget_id": budget.budget_id,
                    "severity": "warning",
                    "at": iso(now) or "",
                    **_scope_attributes(budget),
                },
            )
        )
        sent.append(f"{budget.budget_id}:anomaly")
    return sent
