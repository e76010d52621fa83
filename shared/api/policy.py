"""The access policy: what one caller may see. The routes ask it; they encode no rule.

Finance and admins see everything and manage budgets; a team member sees their team's
jobs, spend and budgets (a job's team is the value of its ``team_tag_key`` tag).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shared.api.access import Caller, denial, resolve_caller
from shared.api.errors import ApiProblem, forbidden
from shared.config.access import AccessConfig

if TYPE_CHECKING:
    from shared.config.budgets import Budget


def policy_for(arn: str | None, access: AccessConfig) -> AccessPolicy:
    """The policy of the caller with this IAM ARN; a 403 naming the setting when no
    rule lets it in (access fails closed)."""
    caller = resolve_caller(arn, access)
    if caller is None:
        raise forbidden(denial(arn, access))
    return AccessPolicy(caller, access.team_tag_key)


@dataclass(frozen=True)
class AccessPolicy:
    caller: Caller
    team_tag_key: str

    @property
    def sees_everything(self) -> bool:
        return self.caller.sees_everything

    def team_scope(self, team: str | None, verb: str, noun: str) -> str | None:
        """The team a listing is limited to: the one asked for (or none) for finance and
        admins, the caller's own for a team member (asking for another is a 403)."""
        if self.sees_everything:
            return team
        if team is not None and team != self.caller.team:
            raise ApiProblem(403, f"you may {verb} only team {self.caller.team}'s {noun}", "team")
        return self.caller.team

    def tag_filters(self, team: str | None, **tags: str | None) -> dict[str, str]:
        """A listing's tag filters; ``team`` is the value of the team tag, under whichever
        key the teams are tagged with (the one place where the two meet)."""
        wanted = {**tags, self.team_tag_key: team}
        return {key: value for key, value in wanted.items() if value}

    def may_read(self, job_tags: Mapping[str, str]) -> bool:
        return self.sees_everything or job_tags.get(self.team_tag_key) == self.caller.team

    def may_see_budget(self, budget: Budget) -> bool:
        return self.may_read(budget.scope.tag or {})

    def finance_or_admin(self, what: str) -> Caller:
        """The caller, when finance or an admin; else a 403 saying whose ``what`` is."""
        if not self.sees_everything:
            raise forbidden(
                f"{what} is for finance and admins (ledger.access.rules); "
                f"you are a member of team {self.caller.team}"
            )
        return self.caller

    def job_denied(self, job_id: str) -> ApiProblem:
        """A job the caller may not read, or none (the same answer to a team member)."""
        return forbidden(
            f"job {job_id!r} is not visible to team {self.caller.team} "
            "(not your team's job, or none)"
        )
