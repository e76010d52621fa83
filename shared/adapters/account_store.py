"""Member accounts in the ledger table: the organisation's cached account list, the
marker that rate-limits its refresh, and one bounded health record per account.

| record | pk | sk |
|---|---|---|
| cached member list (Organizations ListAccounts) | ACCOUNTS | LIST |
| last refresh of the list (rate limit) | ACCOUNTS | REFRESH |
| one account's health | ACCOUNTS | A#<account> |

A health record has a fixed set of attributes: the last time an event of each kind was
seen (a fixed set of kinds, ``EVENT_KINDS``), whether the member role could be assumed,
the last sweep and the alarms found per swept region (the configured regions: a few),
and the last error (truncated): it never grows with events, instances or time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from shared.adapters.keys import iso
from shared.adapters.table import Below, ConditionFailed, Put, Table, Update

PK = "ACCOUNTS"
LIST_SK = "LIST"
REFRESH_SK = "REFRESH"
MAX_ERROR_CHARS = 500

# detail-type -> the kind a health record counts it under (anything else: "other").
EVENT_KINDS = {
    "EC2 Instance State-change Notification": "ec2_state",
    "EC2 Spot Instance Interruption Warning": "spot",
    "EC2 Instance Rebalance Recommendation": "spot",
    "CloudWatch Alarm State Change": "alarm",
    "SageMaker Training Job State Change": "sagemaker",
    "Object Created": "checkpoint",
    "Object Deleted": "checkpoint",
    "AWS API Call via CloudTrail": "fsx",
    "Capacity Block Delivered": "capacity_block",
    "Capacity Block Expiration Warning": "capacity_block",
    "Capacity Block Reservation Delivered": "capacity_block",
    "Capacity Block Reservation Expiration Warning": "capacity_block",
}


def kind_of(detail_type: str) -> str:
    return EVENT_KINDS.get(detail_type, "other")


@dataclass(frozen=True)
class MemberList:
    accounts: frozenset[str]
    fetched_at: datetime | None
    source: str  # "organizations" | "none"


@dataclass
class AccountHealth:
    account: str
    seen: dict[str, str] = field(default_factory=dict)
    role_assumable: bool | None = None  # None: not tried yet
    role_checked_at: str | None = None
    swept: dict[str, str] = field(default_factory=dict)  # region -> last sweep (first page)
    alarms: dict[str, int] = field(default_factory=dict)  # region -> alarms found then
    last_error: str | None = None
    last_error_at: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "account": self.account,
            "events_last_seen": dict(sorted(self.seen.items())),
            "role_assumable": self.role_assumable,
            "role_checked_at": self.role_checked_at,
            "last_sweep": dict(sorted(self.swept.items())),
            "alarms_in_place": dict(sorted(self.alarms.items())),
            "last_error": self.last_error,
            "last_error_at": self.last_error_at,
        }


def _health_of(item: dict[str, Any]) -> AccountHealth:
    health = AccountHealth(account=str(item["account"]))
    for name, value in item.items():
        if name.startswith("seen_"):
            health.seen[name[5:]] = str(value)
        elif name.startswith("swept_"):
            health.swept[name[6:]] = str(value)
        elif name.startswith("alarms_"):
            health.alarms[name[7:]] = int(value)
    if "role_assumable" in item:
        health.role_assumable = bool(item["role_assumable"])
    health.role_checked_at = item.get("role_checked_at")
    health.last_error = item.get("last_error")
    health.last_error_at = item.get("last_error_at")
    return health


class AccountStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    # -- the member list -----------------------------------------------------------------
    def member_list(self) -> MemberList:
        item = self.table.get(PK, LIST_SK)
        if item is None:
            return MemberList(frozenset(), None, "none")
        fetched = datetime.fromisoformat(str(item["fetched_at"]).replace("Z", "+00:00"))
        return MemberList(frozenset(item.get("accounts") or ()), fetched, str(item["source"]))

    def put_member_list(self, accounts: frozenset[str], at: datetime) -> None:
        item: dict[str, Any] = {
            "pk": PK,
            "sk": LIST_SK,
            "fetched_at": iso(at),
            "source": "organizations",
        }
        if accounts:  # DynamoDB holds no empty set
            item["accounts"] = set(accounts)
        self.table.transact([Put(item)])

    def claim_refresh(self, now: datetime, not_since: datetime) -> bool:
        """True for the one caller that may refresh now: no refresh since ``not_since``
        (a conditional write, so concurrent containers refresh once between them)."""
        try:
            self.table.transact(
                [
                    Update(
                        PK,
                        REFRESH_SK,
                        set={"at": iso(now)},
                        conditions=[Below("at", iso(not_since))],
                    )
                ]
            )
        except ConditionFailed:
            return False
        return True

    # -- health --------------------------------------------------------------------------
    def _touch(self, account: str, values: dict[str, Any]) -> None:
        self.table.transact([Update(PK, f"A#{account}", set={"account": account, **values})])

    def saw_event(self, account: str, kind: str, at: datetime) -> None:
        self._touch(account, {f"seen_{kind}": iso(at)})

    def swept(self, account: str, region: str, at: datetime, alarms: int | None) -> None:
        values: dict[str, Any] = {
            f"swept_{region}": iso(at),
            "role_assumable": True,
            "role_checked_at": iso(at),
        }
        if alarms is not None:
            values[f"alarms_{region}"] = alarms
        self._touch(account, values)

    def failed(self, account: str, at: datetime, error: str, role_assumable: bool | None) -> None:
        values: dict[str, Any] = {"last_error": error[:MAX_ERROR_CHARS], "last_error_at": iso(at)}
        if role_assumable is not None:
            values |= {"role_assumable": role_assumable, "role_checked_at": iso(at)}
        self._touch(account, values)

    def health(self) -> list[AccountHealth]:
        return [_health_of(item) for item in self.table.query(PK, begins_with="A#")]
