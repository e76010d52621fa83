"""The CDK context of the app as a model: ``StackSettings``, validated once
(``cdk/app.py``). How a context's layers (defaults, cdk.json, ``-c``) are merged into
it, and how invalid keys are reported: ``cdk/context.py``.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from shared.config.ledger import LedgerConfig

# The retention periods CloudWatch Logs accepts (days).
LOG_RETENTION_DAYS = (
    1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731,
    1096, 1827, 2192, 2557, 2922, 3288, 3653,
)  # fmt: skip
# Deliberately simple: one "@", no spaces, a dot in the domain. SNS confirms the
# address anyway; this catches typos and non-addresses at synth.
_EMAIL = re.compile(r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$")
_ACCOUNT = r"^\d{12}$"
_REGION = r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$"


class _Settings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ApiThrottling(_Settings):
    """The API stage's throttling (requests per second, steady and burst)."""

    rate_limit: float = Field(default=25, gt=0, le=10_000)
    burst_limit: int = Field(default=50, ge=1, le=5_000)


class MemberSettings(_Settings):
    """The member-account stack (``stacks`` includes ``member``): where it goes and
    what it forwards to the tracker's event bus (in ``account``/``region``)."""

    account: str | None = Field(default=None, pattern=_ACCOUNT)
    region: str | None = Field(default=None, pattern=_REGION)
    stack_name: str = Field(default="CostTrackerMember", pattern=r"^[A-Za-z][A-Za-z0-9-]{0,127}$")
    # Checkpoint buckets in the member account whose S3 events are forwarded.
    checkpoint_buckets: tuple[str, ...] = ()


class SlackChannel(_Settings):
    """An AWS Chatbot Slack channel (the workspace must be authorised in Chatbot once,
    in the console): its workspace id (T...) and channel id (C...)."""

    workspace_id: str = Field(pattern=r"^[0-9A-Z]{1,255}$")
    channel_id: str = Field(pattern=r"^[A-Za-z0-9]{1,255}$")


class TeamRoute(_Settings):
    """Where one team's alerts go: email addresses and an optional Slack channel. The
    team is the value of the configured team tag (``ledger.access.team_tag_key``)."""

    emails: tuple[str, ...] = ()
    slack: SlackChannel | None = None

    @field_validator("emails")
    @classmethod
    def _emails(cls, emails: tuple[str, ...]) -> tuple[str, ...]:
        return _checked_emails(emails)


def _checked_emails(emails: tuple[str, ...]) -> tuple[str, ...]:
    for email in emails:
        if not _EMAIL.match(email):
            raise ValueError(f"not an email address: {email!r}")
    if len(set(emails)) != len(emails):
        raise ValueError("duplicate email address")
    return emails


TEAM_NAME = r"^[A-Za-z0-9._-]{1,64}$"


class StackSettings(_Settings):
    account: str = Field(pattern=_ACCOUNT)
    region: str = Field(pattern=_REGION)
    stack_name: str = Field(default="CostTracker", pattern=r"^[A-Za-z][A-Za-z0-9-]{0,127}$")
    # Which stacks this app synthesizes: the tracker, the member-account stack, or both.
    stacks: tuple[Literal["tracker", "member"], ...] = Field(default=("tracker",), min_length=1)
    ledger: LedgerConfig = LedgerConfig()
    finance_emails: tuple[str, ...] = ()
    # Retired: it subscribed every team to every team's alerts. Use ``teams``.
    team_emails: tuple[str, ...] = ()
    # team (its team tag value) -> where its alerts go; each subscription is filtered to
    # that team's alerts (the ``team`` message attribute).
    teams: dict[str, TeamRoute] = {}
    admin_emails: tuple[str, ...] = ()
    log_retention_days: int = 90
    api_throttling: ApiThrottling = ApiThrottling()
    # Reserved concurrency of each event-path function (0: none reserved). Reserving
    # needs account headroom: Lambda keeps at least 100 unreserved executions.
    event_reserved_concurrency: int = Field(default=5, ge=0, le=1000)
    # Reserved concurrency of the API function (0: none reserved): a flood of API calls
    # cannot take the event path's capacity, and the API keeps its own.
    api_reserved_concurrency: int = Field(default=10, ge=0, le=1000)
    member: MemberSettings = MemberSettings()

    @field_validator("finance_emails", "admin_emails")
    @classmethod
    def _emails(cls, emails: tuple[str, ...]) -> tuple[str, ...]:
        return _checked_emails(emails)

    @field_validator("team_emails")
    @classmethod
    def _no_team_emails(cls, emails: tuple[str, ...]) -> tuple[str, ...]:
        if emails:
            raise ValueError(
                "team_emails is retired (each address got every team's alerts): set "
                'teams instead, e.g. -c teams=\'{"nlp": {"emails": ["nlp@example.com"]}}\''
            )
        return emails

    @field_validator("teams")
    @classmethod
    def _team_names(cls, teams: dict[str, TeamRoute]) -> dict[str, TeamRoute]:
        for team in teams:
            if not re.match(TEAM_NAME, team):
                raise ValueError(f"team {team!r}: letters, digits, '.', '_' and '-' only")
        return teams

    @field_validator("log_retention_days")
    @classmethod
    def _retention(cls, days: int) -> int:
        if days not in LOG_RETENTION_DAYS:
            raise ValueError(f"CloudWatch Logs retention must be one of {LOG_RETENTION_DAYS}")
        return days


CONTEXT_KEYS: tuple[str, ...] = tuple(StackSettings.model_fields)
