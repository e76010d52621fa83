"""Who may read what through the API (IAM auth): a caller's IAM ARN, matched against
configured patterns, is a team member, finance or an admin.

Team members see only their team's jobs; finance and admins see everything and manage
budgets. A denied request never says whether the job exists.

Access fails closed: with no rules nobody is let in (``execute-api:Invoke`` alone, which
broad policies such as PowerUserAccess carry, is not enough); the answer names the
setting that grants access.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

from shared.config.access import AccessConfig, Role


@dataclass(frozen=True)
class Caller:
    arn: str
    role: Role
    team: str | None = None

    @property
    def sees_everything(self) -> bool:
        return self.role in ("finance", "admin")

    @property
    def manages_budgets(self) -> bool:
        return self.role in ("finance", "admin")

    def may_read(self, job_tags: dict[str, str], team_tag_key: str) -> bool:
        return self.sees_everything or job_tags.get(team_tag_key) == self.team


ACCESS_SETTING = "ledger.access"
_EXAMPLE_RULE = '{"arn_pattern": "arn:aws:sts::*:assumed-role/Admin/*", "role": "admin"}'


def resolve_caller(arn: str | None, access: AccessConfig) -> Caller | None:
    """The caller's role by the first matching rule; None when denied (always, with no
    rules)."""
    if not arn or not access.rules:
        return None
    for rule in access.rules:
        if fnmatchcase(arn, rule.arn_pattern):
            return Caller(arn=arn, role=rule.role, team=rule.team)
    return None


def denial(arn: str | None, access: AccessConfig) -> str:
    """Why ``arn`` was let in nowhere, naming the setting that grants access."""
    who = arn or "(unknown caller)"
    if not access.rules:
        return (
            f"access denied for {who}: no access rules are configured, so the API is closed. "
            f"Set {ACCESS_SETTING}.rules (admin, finance and team ARN patterns), e.g. "
            f"-c {ACCESS_SETTING}.rules='[{_EXAMPLE_RULE}]'"
        )
    return (
        f"access denied for {who}: it matches no rule of {ACCESS_SETTING}.rules "
        "(admin, finance and team ARN patterns)"
    )
