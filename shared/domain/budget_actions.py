"""What a budget does when it crosses a threshold (docs/cost-rules.md "Budgets: forecasts and
actions"): notify (the default), stop after the next complete checkpoint, stop now, or
deny launches carrying the scope's tags. Dry run is the default: recorded and announced,
nothing stopped or denied.

An action's id is a function of what it is about (budget, period, threshold, action),
never of when it was computed, so that every evaluation, timer and retry agrees on it.
"""

from __future__ import annotations

import re
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
    "job_of_checkpoint_prefix",
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


def job_of_checkpoint_prefix(key_pattern: str, prefix: str) -> str | None:
    """The job a SageMaker ``CheckpointConfig.S3Uri`` key prefix names under the tracked
    key pattern, or None. SageMaker writes its checkpoints as ``<prefix>/<file>``, so the
    part of the pattern up to its ``job`` group must match the prefix, the job's name end
    there, and the pattern go on with a ``/`` (the job a directory): ``runs/llama-sm/``
    names ``llama-sm`` under ``^runs/(?P<job>[^/]+)/step-(?P<step>\\d+)/``;
    ``other/llama-sm/`` names nothing."""
    head = _up_to_job_group(key_pattern)
    rest = key_pattern[len(head) :] if head is not None else ""
    if head is None or not rest.startswith(("/", "\\/")):
        return None  # the job is not a directory of its own: no prefix can name it
    key = prefix.rstrip("/") + "/"
    found = re.search(head, key)
    if found is None or not found.group("job") or key[found.end("job") :][:1] != "/":
        return None
    return found.group("job")


def _up_to_job_group(pattern: str) -> str | None:
    """The pattern cut after its ``(?P<job>...)`` group's closing parenthesis."""
    start = pattern.find("(?P<job>")
    if start < 0:
        return None
    depth, i, in_class = 0, start, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "]":  # "[]...]": a literal ] first
                i += 1
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return pattern[: i + 1]
        i += 1
    return None
