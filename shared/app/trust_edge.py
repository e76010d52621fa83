"""The trust check at the event edge: after an event parses, and before any service
sees it, its ``account`` must be one the tracker acts for
(``shared.services.account_trust``). Only with many accounts configured
(``ledger.accounts.organization_id`` or ``allowed_accounts``); a single-account tracker's
bus admits no other account's events at all.

A refused event raises ``UntrustedAccount`` (logged with its id and account, counted as
``EventsRefused``): Lambda's retries end in the function's dead-letter queue with the
original event. An admitted member account's health record notes the event's kind, at
most once per ``SEEN_EVERY`` per container (a few writes an hour, not one per event)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from shared.adapters.telemetry import count

if TYPE_CHECKING:
    from shared.app.runtime import Runtime
    from shared.services.account_trust import AccountTrust
    from shared.services.deps import LedgerDeps

SEEN_EVERY = timedelta(minutes=10)
_trust: WeakKeyDictionary[Runtime, AccountTrust] = WeakKeyDictionary()
_seen: WeakKeyDictionary[Runtime, dict[tuple[str, str], datetime]] = WeakKeyDictionary()


def trust_of(rt: Runtime) -> AccountTrust:
    """The runtime's ``AccountTrust`` (built once per container)."""
    if rt not in _trust:
        from shared.adapters.account_store import AccountStore
        from shared.adapters.organizations import organization_accounts
        from shared.adapters.tracker_role import member_make_client
        from shared.services.account_trust import AccountTrust

        config = rt.settings.config.accounts
        accounts = rt.accounts
        organization = None
        if config.organization_id:
            make = member_make_client(
                rt.client, True, lambda: accounts.home_account, config.tracker_role_name
            )
            organization = organization_accounts(
                accounts, make, config.organizations_role_name, config.management_account
            )
        _trust[rt] = AccountTrust(
            config,
            lambda: accounts.home_account,
            AccountStore(rt.table),
            organization,
            rt.clock,
        )
    return _trust[rt]


def admit(event: object, rt: Runtime) -> None:
    """Raise ``UntrustedAccount`` unless ``event``'s account is admitted."""
    account = getattr(event, "account", None)
    if not isinstance(account, str) or not rt.settings.config.accounts.many_accounts:
        return
    from shared.adapters.account_store import AccountStore, kind_of
    from shared.services.account_trust import UntrustedAccount

    trust = trust_of(rt)
    try:
        trust.check(account)
    except UntrustedAccount:
        count("EventsRefused")
        raise
    if account == trust.home_account():
        return
    kind = kind_of(str(getattr(event, "detail_type", "")))
    now = rt.clock.now()
    seen = _seen.setdefault(rt, {})
    last = seen.get((account, kind))
    if last is None or now - last >= SEEN_EVERY:
        AccountStore(rt.table).saw_event(account, kind, now)
        seen[(account, kind)] = now


def team_bound(rt: Runtime, deps: LedgerDeps) -> LedgerDeps:
    """``deps`` whose inventory refuses an instance of a team limited to other accounts
    (``ledger.accounts.team_accounts``; as they are when no team is limited)."""
    config = rt.settings.config
    if not config.accounts.team_accounts:
        return deps
    from dataclasses import replace

    from shared.services.team_bound import TeamBoundInventory

    allows = trust_of(rt).team_allows
    inventory = TeamBoundInventory(deps.inventory, allows, config.access.team_tag_key)
    return replace(deps, inventory=inventory)
