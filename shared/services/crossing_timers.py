"""Alerts at the crossing: when the forecast's central projection crosses a threshold
less than 15 minutes from now, the minute tick plans a timer at that moment (an SQS
message delayed to the second); the timer evaluates that budget then, so its alert (and
its actions) come within seconds of the crossing instead of at the next minute.

A timer is planned once per (budget, period, threshold, moment): when the forecast moves,
the new moment gets a timer of its own and the old one finds nothing crossed yet (void:
it does nothing). The alert's id is the budget alert's, so a crossing alerts once however
many timers and ticks see it; the minute tick stays the safety net.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger

from shared.adapters.crossing_timers import MAX_DELAY_SECONDS
from shared.domain.budget_actions import action_id
from shared.services.action_deps import ActionDeps
from shared.services.deps import LedgerDeps

if TYPE_CHECKING:
    from shared.services.budgets import BudgetStatus

HORIZON = timedelta(seconds=MAX_DELAY_SECONDS)
logger = Logger(service="costtracker", child=True)


def _plan_once(
    acts: ActionDeps,
    budget_id: str,
    period_key: str,
    what: str,
    moment: datetime,
    threshold: int,
    now: datetime,
    send_at: datetime | None = None,
) -> bool:
    """Send the timer of one moment (due at ``send_at``, else at the moment) unless it
    was sent, then claim it: a send that fails leaves no claim, so the next tick sends
    it again (and the minute tick stays the safety net); two runs at once may both send,
    which the timer's evaluation absorbs (one alert id per crossing)."""
    assert acts.timers is not None
    if acts.store.timer_claimed(budget_id, period_key, what, moment):
        return False
    try:
        acts.timers.plan(budget_id, threshold, send_at or moment, now)
    except Exception as exc:  # one timer never fails the tick or the checkpoint event
        logger.warning(
            "crossing timer not sent: the next tick tries again",
            extra={"budget_id": budget_id, "what": what, "error": str(exc)[:300]},
        )
        return False
    acts.store.claim_timer(budget_id, period_key, what, moment)
    return True


def crossing_moments(status: BudgetStatus, thresholds: tuple[int, ...]) -> dict[int, datetime]:
    """Each threshold's crossing moment on the one forecast's central projection
    (``BudgetForecast.crossings``; thresholds already crossed have none)."""
    return {
        c.threshold: c.at
        for c in status.forecast.crossings
        if c.state == "projected" and c.at is not None and c.threshold in thresholds
    }


def plan_timers(
    deps: LedgerDeps, status: BudgetStatus, now: datetime, acts: ActionDeps
) -> datetime:
    """Plan a timer for each crossing less than 15 minutes away; returns when the tick
    must run again to plan the next one (15 minutes before it)."""
    wake = now + timedelta(hours=1)
    if acts.timers is None:
        return wake
    # The projection never rises faster than today's burn, so a threshold that burn
    # reaches only beyond the horizon is not crossed within it either: no bisection.
    near = []
    for threshold in status.budget.thresholds:
        target = status.budget.amount_usd * threshold / 100
        if status.spend >= target or status.burn_per_hour <= 0:
            continue
        soonest = now + timedelta(
            seconds=float((target - status.spend) / status.burn_per_hour * 3600)
        )
        if soonest - now <= HORIZON:
            near.append(threshold)
        else:
            wake = min(wake, soonest - HORIZON)
    moments = crossing_moments(status, tuple(near))
    budget_id = status.budget.budget_id
    for threshold, moment in sorted(moments.items()):
        if moment <= now:
            continue
        if moment - now <= HORIZON:
            _plan_once(acts, budget_id, status.period_key, str(threshold), moment, threshold, now)
        else:
            wake = min(wake, moment - HORIZON)
    return min(wake, plan_deadlines(status, now, acts))


def wake_waiting_stops(acts: ActionDeps, job_id: str, complete_at: datetime, now: datetime) -> int:
    """A checkpoint of ``job_id`` completes at ``complete_at`` (its marker was written, or
    its quiet period ends then): a timer at that moment for each budget whose stop waits
    for the job, so the stop acts then, not at the next minute. Once per (budget, job,
    moment) however often the event is delivered. Returns the timers planned."""
    planned = 0
    if acts.timers is None or complete_at - now > HORIZON:
        return planned
    for aid, budget_id, period_key, threshold in acts.store.waiting_on(job_id):
        record = acts.store.get(aid)
        if record is None or record.state != "waiting_for_checkpoint" or record.dry_run:
            continue
        what, due = f"checkpoint:{job_id}", max(complete_at, now)
        if _plan_once(acts, budget_id, period_key, what, complete_at, threshold, now, due):
            planned += 1
    return planned


def plan_deadlines(status: BudgetStatus, now: datetime, acts: ActionDeps) -> datetime:
    """A waiting stop_after_checkpoint stops anyway when its grace ends: a timer at that
    moment too, so that the stop is not up to a minute late."""
    wake = now + timedelta(hours=1)
    budget = status.budget
    for action in budget.actions:
        if action.do != "stop_after_checkpoint" or acts.timers is None:
            continue
        record = acts.store.get(action_id(budget.budget_id, status.period_key, action))
        if record is None or record.dry_run or record.fired_at is None:
            continue
        if record.state != "waiting_for_checkpoint":
            continue
        deadline = record.fired_at + action.grace
        if now < deadline <= now + HORIZON:
            what = f"grace:{action.at}"
            _plan_once(acts, budget.budget_id, status.period_key, what, deadline, action.at, now)
        elif deadline > now:
            wake = min(wake, deadline - HORIZON)
    return wake
