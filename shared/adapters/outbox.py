"""The alert outbox: every alert is recorded (pending) before it is sent, and stays
until SNS accepts it (``sent``) or refuses it for good (``failed``); its id is the
record's key, so an alert is recorded once, ever. A pending alert that was refused
carries when it may be tried again (``retry_at``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict
from datetime import datetime
from decimal import Decimal
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

    def note_failure(self, alert_id: str, error: str, retry_at: datetime, refusals: int) -> None:
        """A refused publish: the error, one more attempt, when to try again, and how
        many refusals for good in a row (0 after any other failure)."""
        update = Update(
            OUTBOX,
            alert_id,
            set={
                "last_error": error[:500],
                "retry_at": keys.iso(retry_at),
                "refusals": Decimal(refusals),
            },
            add={"attempts": Decimal(1)},
        )
        self.table.transact([update])

    def mark_failed(self, alert_id: str, error: str, now: datetime) -> None:
        """Refused for good: a final state, out of the pending index."""
        self.table.transact(
            [
                Update(
                    OUTBOX,
                    alert_id,
                    set={"state": "failed", "failed_at": keys.iso(now), "last_error": error[:500]},
                    add={"attempts": Decimal(1)},
                    remove=schema.index_attributes(schema.PENDING_INDEX),
                )
            ]
        )

    def pending(self) -> Iterator[dict[str, Any]]:
        """The pending alerts, oldest first, read page by page as the caller goes."""
        return iter(self.table.query(schema.PENDING, index=schema.PENDING_INDEX.name))

    def revisions(self, base_id: str) -> Iterator[Alert]:
        """The alert recorded as ``base_id`` and its revisions (``base_id:<n>``), read page
        by page as the caller goes."""
        for item in self.table.query(OUTBOX, begins_with=base_id):
            if item["sk"] == base_id or str(item["sk"]).startswith(base_id + ":"):
                yield alert_of(item)
