"""The organisation's member accounts (Organizations ListAccounts, paged).

ListAccounts answers only in the management account or in a delegated administrator
account of AWS Organizations. The tracker calls it with its own role when it runs in one
of those; else through a small role in the management account
(``ledger.accounts.organizations_role_name``: ``organizations:ListAccounts`` only),
assumed through the one client factory."""

from __future__ import annotations

from typing import Any

from shared.adapters.accounts import AccountClients, ClientFactory, MakeClient


class OrganizationAccounts:
    def __init__(self, clients: ClientFactory, management_account: str = "") -> None:
        self._clients = clients
        self._management = management_account

    def active_accounts(self) -> frozenset[str]:
        """Every ACTIVE account of the organisation (suspended and closing ones are not
        members any more)."""
        client: Any = self._clients.client_for("organizations", self._management, "us-east-1")
        found: set[str] = set()
        for page in client.get_paginator("list_accounts").paginate():
            for account in page.get("Accounts", []):
                if account.get("Status", "ACTIVE") == "ACTIVE":
                    found.add(str(account["Id"]))
        return frozenset(found)


def organization_accounts(
    accounts: AccountClients,
    make: MakeClient,
    role_name: str | None,
    management_account: str | None,
) -> OrganizationAccounts:
    """ListAccounts with the tracker's own role, or through ``role_name`` in the
    management account (a factory of its own over the same ``make``)."""
    if not role_name or not management_account:
        return OrganizationAccounts(accounts)
    through_role = AccountClients(
        make,
        home_account=lambda: accounts.home_account,
        role_name=role_name,
        default_region="us-east-1",
    )
    return OrganizationAccounts(through_role, management_account)
