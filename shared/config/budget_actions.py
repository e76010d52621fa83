"""A budget's actions as declared (CDK context or the API): at a threshold, notify, stop
after the next complete checkpoint, stop now, or deny launches; dry run unless said
otherwise (what they do: ``shared.domain.budget_actions``)."""

from __future__ import annotations

from datetime import timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

ActionKind = Literal["notify", "stop_after_checkpoint", "stop_now", "deny_launch"]
ActionState = Literal["announced", "waiting_for_checkpoint", "done", "released", "failed"]
# States in which nothing more will happen to an action in its period.
FINAL_STATES: frozenset[str] = frozenset({"announced", "done", "released", "failed"})
STOPS: frozenset[str] = frozenset({"stop_after_checkpoint", "stop_now"})
# A stop_after_checkpoint waits at most this long when no grace is given.
DEFAULT_GRACE_MINUTES = 60
MAX_GRACE_MINUTES = 24 * 60


class BudgetAction(BaseModel):
    """``{"at": PERCENT, "do": ACTION, ...}`` on a budget."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    at: int = Field(ge=1, le=1000)
    do: ActionKind = "notify"
    dry_run: bool = True
    # stop_after_checkpoint only: how long to wait for a complete checkpoint.
    grace_minutes: int | None = Field(default=None, ge=0, le=MAX_GRACE_MINUTES)

    @model_validator(mode="after")
    def _grace_only_for_checkpoint_stops(self) -> BudgetAction:
        if self.grace_minutes is not None and self.do != "stop_after_checkpoint":
            raise ValueError(f"grace_minutes applies to stop_after_checkpoint, not to {self.do}")
        return self

    @property
    def grace(self) -> timedelta:
        minutes = DEFAULT_GRACE_MINUTES if self.grace_minutes is None else self.grace_minutes
        return timedelta(minutes=minutes)
