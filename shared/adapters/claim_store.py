"""Once-only claims (``ONCE#<key>`` / ``ONCE``): the first caller of a key wins, across
concurrent runs; DynamoDB's TTL removes a claim after ``expires_at``."""

from __future__ import annotations

from datetime import datetime

from shared.adapters.ledger_schema import TTL_ATTRIBUTE
from shared.adapters.table import Absent, ConditionFailed, Item, Put, Table


def claim_key(key: str) -> tuple[str, str]:
    return (f"ONCE#{key}", "ONCE")


class ClaimStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    def claim_once(self, key: str, expires_at: datetime) -> bool:
        """True for the first caller only (once-only work across concurrent runs)."""
        pk, sk = claim_key(key)
        item: Item = {
            "pk": pk,
            "sk": sk,
            "kind": "once",
            TTL_ATTRIBUTE: int(expires_at.timestamp()),
        }
        try:
            self.table.transact([Put(item, [Absent()])])
        except ConditionFailed:
            return False
        return True
