"""Releasing a budget action (finance and admins, through the API): a waiting stop is
cancelled, a deny is detached, and the action is suppressed for the rest of its period
(its record says ``released``, and an action fires only once per period). It never
starts anything: no stop is undone by starting an instance. A deny is detached here from
the principals of the tracker's own account; its parts elsewhere (member accounts, an
SCP) by the next minute's budget evaluation, which may act there."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from shared.adapters.action_store import ActionRecord
from shared.config.budgets import Budget
from shared.domain.budget_actions import action_id
from shared.domain.budgets import period_bounds
from shared.domain.finance_day import FinanceCalendar
from shared.services.action_deps import ActionDeps
from shared.services.alerts import AlertPoster
from shared.services.budget_actions import announce
from shared.services.launch_denials import DENY_PARTS, detach_parts


class UnknownAction(LookupError):
    """The id names no action of this budget (in any period it could be in)."""


class ReleaseConflict(RuntimeError):
    """Another writer moved the action while it was being released: try again."""


@dataclass(frozen=True)
class Released:
    record: ActionRecord
    cancelled: list[str]
    detached: bool


def release_action(
    budget: Budget,
    aid: str,
    caller_arn: str,
    now: datetime,
    calendar: FinanceCalendar,
    acts: ActionDeps,
    poster: AlertPoster,
) -> Released:
    """Release ``aid`` of ``budget``; releasing a released action again changes nothing.
    An action of the current period not fired yet is released ahead (it will not fire)."""
    record = acts.store.get(aid)
    if record is None:
        _, _, period_key = period_bounds(budget, now, calendar)
        rule = next(
            (a for a in budget.actions if action_id(budget.budget_id, period_key, a) == aid), None
        )
        if rule is None:
            raise UnknownAction(aid)
        record = ActionRecord(
            action_id=aid,
            budget_id=budget.budget_id,
            period_key=period_key,
            kind=rule.do,
            at_percent=rule.at,
            dry_run=rule.dry_run,
            state="announced",
            fired_at=None,
            detail="released before it fired",
        )
        if not acts.store.create(record):
            raise ReleaseConflict(aid)
    if record.budget_id != budget.budget_id:
        raise UnknownAction(aid)
    if record.state == "released":
        return Released(record, [], False)
    cancelled = [
        t.target_id
        for t in acts.store.targets(aid)
        if t.kind not in DENY_PARTS and (not t.result or t.result == "would_stop")
    ]
    detached = False
    if record.kind == "deny_launch" and record.fired_at is not None and acts.denial is not None:
        # The principals of the tracker's own account now; the next minute's tick
        # detaches the rest (member accounts, an SCP) and deletes the policies.
        detached = detach_parts(acts, record, now, home_only=True)
    saved = acts.store.save(
        replace(record, state="released", released_by=caller_arn, released_at=now)
    )
    if saved is None:
        raise ReleaseConflict(aid)
    announce(budget, saved, "released", now, poster)
    return Released(saved, cancelled, detached)
