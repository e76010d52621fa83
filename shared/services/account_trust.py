"""The organisation as the trust boundary: which accounts the tracker acts for.

An account is admitted if it is the tracker's own, on the allow-list
(``ledger.accounts.allowed_accounts``, where Organizations is not used), or on the
organisation's cached member list (Organizations ListAccounts, kept in the ledger table
for ``LIST_MAX_AGE`` and re-read by a container every ``READ_EVERY``). An account missing
from the list triggers one refresh, at most one per ``refresh_minutes`` across every
container (a conditional write), before it is refused: a newly joined account's first
events are admitted, and an outsider cannot make the tracker call ListAccounts more
than that. A refused event raises ``UntrustedAccount``: Lambda's retries end in the
function's dead-letter queue with the event, so nothing is lost (redrive once the
account is admitted).

``team_allows`` is the optional second boundary: a team tag value may be limited to
some accounts (``ledger.accounts.team_accounts``), so one member account cannot book
cost to another team's jobs and budgets by tagging its instances with their names.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from shared.adapters.account_store import AccountStore, MemberList
from shared.adapters.organizations import OrganizationAccounts
from shared.config.ledger import AccountsConfig
from shared.domain.clock import Clock

logger = logging.getLogger("costtracker.trust")
LIST_MAX_AGE = timedelta(days=1)  # the planner refreshes a list older than this
READ_EVERY = timedelta(minutes=5)  # a container re-reads the cached list this often


class UntrustedAccount(Exception):
    """An event (or a unit of work) names an account the tracker does not act for."""

    def __init__(self, account: str, reason: str) -> None:
        super().__init__(f"account {account} refused: {reason}")
        self.account = account
        self.reason = reason


@dataclass
class AccountTrust:
    config: AccountsConfig
    home_account: Callable[[], str]
    store: AccountStore
    organization: OrganizationAccounts | None
    clock: Clock
    _cached: MemberList | None = None
    _read_at: datetime | None = None
    refreshes: int = field(default=0)

    def _list(self) -> MemberList:
        now = self.clock.now()
        if self._cached is None or self._read_at is None or now - self._read_at >= READ_EVERY:
            self._cached, self._read_at = self.store.member_list(), now
        return self._cached

    def _static(self, account: str) -> bool:
        return account == self.home_account() or account in self.config.allowed_accounts

    def admits(self, account: str) -> bool:
        """Admitted now (a missing account first triggers the rate-limited refresh)."""
        if self._static(account):
            return True
        if self.organization is None:
            return False
        if account in self._list().accounts:
            return True
        self._cached = None  # another container may have refreshed it since
        if account in self._list().accounts:
            return True
        return self.refresh() and account in self._list().accounts

    def check(self, account: str) -> None:
        if not self.admits(account):
            reason = (
                "not in the organisation's account list (refreshed at most every "
                f"{self.config.refresh_minutes} min)"
                if self.organization is not None
                else "not in ledger.accounts.allowed_accounts"
            )
            logger.error(
                "event from an account outside the trust boundary", extra={"account": account}
            )
            raise UntrustedAccount(account, reason)

    def refresh(self) -> bool:
        """ListAccounts into the cache, if no other refresh ran within refresh_minutes."""
        if self.organization is None:
            return False
        now = self.clock.now()
        if not self.store.claim_refresh(now, now - timedelta(minutes=self.config.refresh_minutes)):
            return False
        accounts = self.organization.active_accounts()
        self.store.put_member_list(accounts, now)
        self.refreshes += 1
        self._cached, self._read_at = MemberList(accounts, now, "organizations"), now
        return True

    def members(self) -> list[str]:
        """Every admitted account (the sweep's), the tracker's own first; a list older
        than ``LIST_MAX_AGE`` (or none yet) is refreshed first."""
        listed: frozenset[str] = frozenset()
        if self.organization is not None:
            current = self._list()
            fetched = current.fetched_at
            if fetched is None or self.clock.now() - fetched >= LIST_MAX_AGE:
                self.refresh()
            listed = self._list().accounts
        home = self.home_account()
        others = (set(listed) | set(self.config.allowed_accounts)) - {home}
        return [home, *sorted(others)]

    def team_allows(self, team: str | None, account: str) -> bool:
        """False only when ``team`` is limited to accounts and ``account`` is not one."""
        if not team or team not in self.config.team_accounts:
            return True
        return account in self.config.team_accounts[team]
