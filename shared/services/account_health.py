"""What an admin sees of the member accounts (``GET /accounts``, ``costtracker
accounts``): each account's bounded health record, and the accounts of the cached list
or the allow-list that have none yet (nothing seen, never swept)."""

from __future__ import annotations

from typing import Any

from shared.adapters.account_store import AccountHealth, AccountStore
from shared.config.ledger import AccountsConfig
from shared.reports.formatting import iso


def accounts_report(store: AccountStore, config: AccountsConfig, home: str) -> dict[str, Any]:
    listed = store.member_list()
    known = {h.account: h for h in store.health()}
    for account in (set(listed.accounts) | set(config.allowed_accounts)) - {home}:
        known.setdefault(account, AccountHealth(account=account))
    return {
        "accounts": [known[a].as_json() for a in sorted(known)],
        "list_fetched_at": iso(listed.fetched_at) if listed.fetched_at else None,
    }
