"""Who may read what through the API, as configured (``ledger.access``): rules matching a
caller's IAM ARN to a role (team member, finance, admin); the API resolves callers with
them (``shared.api.access``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Role = Literal["team", "finance", "admin"]


class AccessRule(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    # fnmatch pattern on the caller's ARN, e.g. "arn:aws:sts::*:assumed-role/ml-nlp-*/*"
    arn_pattern: str = Field(min_length=1, max_length=512)
    role: Role
    team: str | None = None

    @model_validator(mode="after")
    def _team_for_team_role(self) -> AccessRule:
        if self.role == "team" and not self.team:
            raise ValueError("a rule with role 'team' names the team")
        return self


class AccessConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    # First match wins; a caller matching no rule (or any caller, with no rules) is denied.
    rules: tuple[AccessRule, ...] = ()
    team_tag_key: str = "team"
