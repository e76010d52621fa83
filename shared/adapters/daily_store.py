"""Documents of one UTC day: daily summaries (``SUMMARY#<date>`` / ``SUMMARY``) and
reconciliations (``RECONCILIATION#<date>`` / ``RECONCILIATION``), written whole and read
by date (GetItem / BatchGetItem, 100 keys a call)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date
from typing import Any

from shared.adapters.table import Item, Put, Table


class _DailyStore:
    KIND = ""

    def __init__(self, table: Table) -> None:
        self.table = table

    def key(self, day: date) -> tuple[str, str]:
        return (f"{self.KIND}#{day.isoformat()}", self.KIND)

    def _put(self, day: date, document: dict[str, Any]) -> None:
        pk, sk = self.key(day)
        item: Item = {
            "pk": pk,
            "sk": sk,
            "kind": self.KIND.lower(),
            "document": json.dumps(document),
        }
        self.table.transact([Put(item)])

    def _get(self, days: Sequence[date]) -> dict[date, dict[str, Any]]:
        found: dict[date, dict[str, Any]] = {}
        for item in self.table.batch_get([self.key(d) for d in days]):
            day = date.fromisoformat(str(item["pk"]).removeprefix(f"{self.KIND}#"))
            found[day] = json.loads(item["document"])
        return found


class SummaryStore(_DailyStore):
    KIND = "SUMMARY"

    def put_summary(self, day: date, summary: dict[str, Any]) -> None:
        self._put(day, summary)

    def get_summaries(self, days: Sequence[date]) -> dict[date, dict[str, Any]]:
        return self._get(days)


class ReconciliationStore(_DailyStore):
    KIND = "RECONCILIATION"

    def put_reconciliation(self, day: date, result: dict[str, Any]) -> None:
        self._put(day, result)

    def get_reconciliations(self, days: Sequence[date]) -> dict[date, dict[str, Any]]:
        return self._get(days)
