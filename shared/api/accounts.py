"""``GET /accounts``: the member accounts' health, for admins only."""

from __future__ import annotations

from shared.adapters.account_store import AccountStore
from shared.api.caller import access, new_router, runtime_of
from shared.api.errors import forbidden
from shared.api.models.accounts import AccountsReply
from shared.services.account_health import accounts_report

router = new_router()


@router.get("/accounts")
def list_accounts() -> AccountsReply:
    """Per member account: events last seen by kind, whether the member role could be
    assumed, the last sweep and the alarms found per region, the last error."""
    caller = access(router).caller
    if caller.role != "admin":
        raise forbidden("the member accounts' health is for admins (ledger.access.rules)")
    rt = runtime_of(router)
    config = rt.settings.config.accounts
    home = rt.accounts.home_account if config.many_accounts else ""
    report = accounts_report(AccountStore(rt.table), config, home)
    return AccountsReply.model_validate(report)
