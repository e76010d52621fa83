"""The optional per-team account boundary on the event path: an instance whose team tag
names a team limited to some accounts (``ledger.accounts.team_accounts``) is refused
when it runs in another account, before anything is booked to that team's jobs and
budgets. The refusal raises ``UntrustedAccount`` (the event ends in the dead-letter
queue, nothing lost); the sweep applies the same rule (``shared.services.sweep``)."""

from __future__ import annotations

from collections.abc import Callable

from shared.adapters.inventory import Inventory
from shared.domain.instance import InstanceProfile
from shared.services.account_trust import UntrustedAccount


class TeamBoundInventory:
    def __init__(
        self, inner: Inventory, allows: Callable[[str | None, str], bool], team_tag_key: str
    ) -> None:
        self._inner = inner
        self._allows = allows
        self._team_tag_key = team_tag_key

    def describe(self, instance_id: str, region: str, account: str = "") -> InstanceProfile:
        profile = self._inner.describe(instance_id, region, account)
        team = profile.tags.get(self._team_tag_key)
        owner = profile.account or account
        if not self._allows(team, owner):
            raise UntrustedAccount(
                owner, f"team {team!r} is limited to other accounts (ledger.accounts.team_accounts)"
            )
        return profile
