"""What a budget does when it crosses a threshold (docs/cost-rules.md "Budgets: forecasts and
actions"): notify (the default), stop after the next complete checkpoint, stop now, or
deny launches carrying the scope's tags. Dry run is the default: recorded and announced,
nothing stopped or denied.

An action's id is a function of what it is about (budget, period, threshold, action),
never of when it was computed, so that every evaluation, timer and retry agrees on it.
"""

from __future__ import annotations

from datetime import datetime

from shared.config.budget_actions import (
    DEFAULT_GRACE_MINUTES,
    FINAL_STATES,
    STOPS,
    ActionKind,
    ActionState,
    BudgetAction,
)

__all__ = [
    "DEFAULT_GRACE_MINUTES",
    "FINAL_STATES",
    "STOPS",
    "ActionKind",
    "ActionState",
    "BudgetAction",
    "action_id",
    "stop_due",
]


def action_id(budget_id: str, period_key: str, action: BudgetAction) -> str:
    """Stable: the same budget, period, threshold and action give the same id."""
    return f"{budget_id}:{period_key}:{action.at}:{action.do}"


def stop_due(
    action: BudgetAction, fired_at: datetime, checkpoint_at: datetime | None, now: datetime
) -> bool:
    """Whether a waiting stop of one job's instances is due now: stop_now at once; after a
    checkpoint, once the job has a complete checkpoint written after the crossing, or
    once the grace has run out (it stops anyway)."""
    if action.do == "stop_now":
        return True
    if checkpoint_at is not None and checkpoint_at >= fired_at:
        return True
    return now >= fired_at + action.grace
