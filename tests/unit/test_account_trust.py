"""Which accounts the tracker acts for (the in-memory ledger table): the tracker's own
and the allow-list at once; the organisation's list cached, refreshed once per
``refresh_minutes`` across containers when an unknown account shows up."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from shared.adapters.account_store import AccountStore
from shared.adapters.table import MemoryTable
from shared.config.ledger import AccountsConfig
from shared.domain.clock import FixedClock
from shared.services.account_trust import AccountTrust, UntrustedAccount

HOME = "123456789012"
T0 = datetime(2026, 11, 2, 9, tzinfo=UTC)


class FakeOrganization:
    def __init__(self, *accounts: str) -> None:
        self.accounts = set(accounts)
        self.calls = 0

    def active_accounts(self) -> frozenset[str]:
        self.calls += 1
        return frozenset(self.accounts)


def _trust(
    table: MemoryTable, clock: FixedClock, org: FakeOrganization | None, **config: object
) -> AccountTrust:
    return AccountTrust(
        AccountsConfig.model_validate(config),
        lambda: HOME,
        AccountStore(table),
        org,
        clock,  # type: ignore[arg-type]
    )


def test_without_organizations_only_home_and_the_allow_list() -> None:
    trust = _trust(MemoryTable(), FixedClock(T0), None, allowed_accounts=["111122223333"])
    assert trust.admits(HOME) and trust.admits("111122223333")
    with pytest.raises(UntrustedAccount, match="allowed_accounts"):
        trust.check("999999999999")
    assert trust.members() == [HOME, "111122223333"]


def test_an_unknown_account_refreshes_once_per_interval_across_containers() -> None:
    table, clock = MemoryTable(), FixedClock(T0)
    org = FakeOrganization("222222222222")
    first, second = _trust(table, clock, org), _trust(table, clock, org)
    assert first.admits("222222222222") and org.calls == 1
    assert second.admits("222222222222") and org.calls == 1  # the cached list
    assert not second.admits("999999999999") and not first.admits("999999999999")
    assert org.calls == 1  # rate-limited: no refresh within refresh_minutes
    org.accounts.add("999999999999")  # it joins
    clock.advance_to(T0 + timedelta(minutes=5))
    assert not second.admits("999999999999")  # not yet: the last refresh is 5 min old
    clock.advance_to(T0 + timedelta(minutes=5, seconds=1))
    assert second.admits("999999999999") and org.calls == 2
    assert first.admits("999999999999") and org.calls == 2  # reads the refreshed cache


def test_the_planner_refreshes_a_list_a_day_old() -> None:
    table, clock = MemoryTable(), FixedClock(T0)
    org = FakeOrganization("222222222222")
    trust = _trust(table, clock, org)
    assert trust.members() == [HOME, "222222222222"] and org.calls == 1
    org.accounts = {"333333333333"}  # one left, one joined
    clock.advance_to(T0 + timedelta(hours=23))
    assert trust.members() == [HOME, "222222222222"] and org.calls == 1
    clock.advance_to(T0 + timedelta(days=1))
    assert trust.members() == [HOME, "333333333333"] and org.calls == 2
    assert not trust.admits("222222222222")  # an account that left is refused


def test_team_accounts_limit_only_the_listed_teams() -> None:
    trust = _trust(MemoryTable(), FixedClock(T0), None, team_accounts={"nlp": ["111122223333"]})
    assert trust.team_allows("nlp", "111122223333")
    assert not trust.team_allows("nlp", "444455556666")
    assert trust.team_allows("vision", "444455556666") and trust.team_allows(None, "444455556666")
