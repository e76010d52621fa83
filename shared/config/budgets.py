"""Budgets as declared (CDK context or the API): who they cover (scope), over what period,
how much, and when to alert. The API's budgets are stored in the ledger table and win over
CDK's for the same id; their periods are in ``shared.domain.budgets``."""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from shared.config.budget_actions import BudgetAction

BUDGET_ID = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"


class BudgetScope(BaseModel):
    """Exactly one of: a job, a tag match (keys ANDed), or the whole account."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    job: str | None = Field(default=None, min_length=1, max_length=256)
    tag: dict[str, str] | None = None
    account: bool = False

    @model_validator(mode="after")
    def _exactly_one(self) -> BudgetScope:
        chosen = sum([self.job is not None, self.tag is not None, self.account])
        if chosen != 1:
            raise ValueError("scope needs exactly one of job, tag, account")
        if self.tag is not None:
            if not self.tag:
                raise ValueError("scope.tag needs at least one key")
            for key, value in self.tag.items():
                if not value:
                    raise ValueError(f"scope.tag.{key} needs a value")
        return self

    def describe(self) -> str:
        if self.job is not None:
            return f"job {self.job}"
        if self.tag:
            return " and ".join(f"{k}={v}" for k, v in sorted(self.tag.items()))
        return "the whole account"


class Budget(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    budget_id: str = Field(pattern=BUDGET_ID)
    scope: BudgetScope
    amount_usd: Decimal = Field(gt=0, max_digits=16, decimal_places=6)
    period: Literal["total", "month", "day"] = "total"
    thresholds: tuple[int, ...] = (50, 80, 100)
    recipients: tuple[str, ...] = ()
    # A total budget counts spend from this day on (default: everything the ledger has).
    since: date | None = None
    # What happens at a threshold beyond the alert (dry run unless said otherwise).
    actions: tuple[BudgetAction, ...] = Field(default=(), max_length=10)

    @field_validator("thresholds")
    @classmethod
    def _thresholds(cls, thresholds: tuple[int, ...]) -> tuple[int, ...]:
        if not thresholds:
            raise ValueError("at least one threshold")
        for t in thresholds:
            if not 1 <= t <= 1000:
                raise ValueError(f"a threshold is a percentage from 1 to 1000, got {t}")
        return tuple(sorted(set(thresholds)))

    @model_validator(mode="after")
    def _deny_needs_tags(self) -> Budget:
        """A deny is on the scope's tags: an account-wide budget has none to deny on."""
        if self.scope.account and any(a.do == "deny_launch" for a in self.actions):
            raise ValueError("actions: deny_launch needs a tag or job scope, not the account")
        return self

    @field_validator("recipients")
    @classmethod
    def _emails(cls, emails: tuple[str, ...]) -> tuple[str, ...]:
        for email in emails:
            if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", email):
                raise ValueError(f"not an email address: {email!r}")
        return emails

    def check_tag_keys(self, known: tuple[str, ...]) -> None:
        """Tag scopes may only use tag keys the ledger copies onto jobs."""
        for key in self.scope.tag or {}:
            if key not in known:
                raise ValueError(f"scope.tag.{key}: unknown tag key (known: {', '.join(known)})")
