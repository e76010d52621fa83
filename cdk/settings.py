"""The CDK context of the app, validated once (``cdk/app.py``) into ``StackSettings``.

Every key is a top-level context key (``cdk.json`` "context", or ``-c key=value`` on
the CLI, where list/object/number values are given as JSON).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from shared.config import LedgerConfig

# The retention periods CloudWatch Logs accepts (days).
LOG_RETENTION_DAYS = (
    1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731,
    1096, 1827, 2192, 2557, 2922, 3288, 3653,
)  # fmt: skip
# Deliberately simple: one "@", no spaces, a dot in the domain. SNS confirms the
# address anyway; this catches typos and non-addresses at synth.
_EMAIL = re.compile(r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$")


class SettingsError(ValueError):
    """The CDK context is invalid; the message names every offending key."""


class StackSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    account: str = Field(pattern=r"^\d{12}$")
    region: str = Field(pattern=r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$")
    stack_name: str = Field(default="CostTracker", pattern=r"^[A-Za-z][A-Za-z0-9-]{0,127}$")
    ledger: LedgerConfig = LedgerConfig()
    finance_emails: tuple[str, ...] = ()
    team_emails: tuple[str, ...] = ()
    admin_emails: tuple[str, ...] = ()
    log_retention_days: int = 90

    @field_validator("finance_emails", "team_emails", "admin_emails")
    @classmethod
    def _emails(cls, emails: tuple[str, ...]) -> tuple[str, ...]:
        for email in emails:
            if not _EMAIL.match(email):
                raise ValueError(f"not an email address: {email!r}")
        if len(set(emails)) != len(emails):
            raise ValueError("duplicate email address")
        return emails

    @field_validator("log_retention_days")
    @classmethod
    def _retention(cls, days: int) -> int:
        if days not in LOG_RETENTION_DAYS:
            raise ValueError(f"CloudWatch Logs retention must be one of {LOG_RETENTION_DAYS}")
        return days


CONTEXT_KEYS: tuple[str, ...] = tuple(StackSettings.model_fields)


def load_settings(get_context: Callable[[str], Any]) -> StackSettings:
    """Read every ``StackSettings`` key from the context (absent keys take defaults).

    ``get_context`` is ``app.node.try_get_context``. Raises ``SettingsError`` with one
    line per problem, each naming the context key (dotted path for nested values).
    """
    raw: dict[str, Any] = {}
    for key in CONTEXT_KEYS:
        value = get_context(key)
        if value is None:
            continue
        annotation = StackSettings.model_fields[key].annotation
        if isinstance(value, str) and annotation is not str:
            # `-c finance_emails='["a@example.com"]'` arrives as a string.
            try:
                value = json.loads(value)
            except json.JSONDecodeError as error:
                message = f"invalid CDK context:\n  {key}: not valid JSON ({error})"
                raise SettingsError(message) from None
        raw[key] = value
    try:
        return StackSettings.model_validate(raw)
    except ValidationError as error:
        lines = [
            f"  {'.'.join(str(part) for part in problem['loc'])}: {problem['msg']}"
            f" (got {_short(problem['input'])})"
            for problem in error.errors()
        ]
        raise SettingsError("invalid CDK context:\n" + "\n".join(lines)) from None


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
