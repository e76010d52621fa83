"""The alert outbox: every alert is recorded (pending) before it is sent, and stays
until SNS accepts it; its id is the record's key, so an alert is recorded once, ever."""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import datetime
from typing import Any

from shared.adapters import keys
from shared.adapters import ledger_schema as schema
from shared.adapters.notify import Alert
from shared.adapters.table import Absent, ConditionFailed, Put, Table, Update
from shared.domain.index_facts import PENDING

OUTBOX = "OUTBOX"


def alert_of(item: dict[str, Any]) -> Alert:
    data = json.loads(str(item["alert"]))
    return Alert(**data)


class OutboxStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    def record(self, alert: Alert, now: datetime) -> bool:
        """Record a new alert as pending; False when its id is already recorded."""
        item = {
            "pk": OUTBOX,
            "sk": alert.alert_id,
            "kind": "alert",
            "alert": json.dumps(asdict(alert), sort_keys=True),
            "state": "pending",
            "recorded_at": keys.iso(now),
            **schema.index_entries(PENDING, f"{keys.iso(now)}#{alert.alert_id}"),
        }
        try:
            self.table.transact([Put(item, [Absent()])])
        except ConditionFailed:
            return False
        return True

    def get(self, alert_id: str) -> dict[str, Any] | None:
        return self.table.get(OUTBOX, alert_id)

    def mark_sent(self, alert_id: str, now: datetime) -> None:
        self.table.transact(
            [
                Update(
                    OUTBOX,
                    alert_id,
                    set={"state": "sent", "sent_at": keys.iso(now)},
                    remove=schema.index_attributes(schema.PENDING_INDEX),
                )
            ]
        )

    def note_failure(self, alert_id: str, error: str) -> None:
        from decimal import Decimal

        update = Update(
            OUTBOX, alert_id, set={"last_error": error[:500]}, add={"attempts": Decimal(1)}
        )
        self.table.transact([update])

    def pending(self) -> list[dict[str, Any]]:
        return list(self.table.query(schema.PENDING, index=schema.PENDING_INDEX.name))
