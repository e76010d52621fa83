"""Documents of one UTC day: daily summaries (``SUMMARY#<date>`` / ``SUMMARY``) and
reconciliations (``RECONCILIATION#<date>`` / ``RECONCILIATION``), written whole and read
by date (GetItem / BatchGetItem, 100 keys a call).

A document is stored as JSON in parts of at most ``DOCUMENT_PART_BYTES`` (the head item
holds the first part and the count; ``<KIND>#PART#<n>`` the others), all in one
transaction, so a day of 10,000 instances is a few bounded items, never one that
DynamoDB refuses. A shorter re-write leaves unused higher parts behind: the head's
count says which are current."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date
from decimal import Decimal
from typing import Any

from shared.adapters.table import Item, Put, Table
from shared.domain.limits import DOCUMENT_PART_BYTES, DOCUMENT_PARTS


class DocumentTooLarge(ValueError):
    """A day's document larger than ``DOCUMENT_PARTS`` parts (the caller caps it)."""


class _DailyStore:
    KIND = ""

    def __init__(self, table: Table) -> None:
        self.table = table

    def key(self, day: date) -> tuple[str, str]:
        return (f"{self.KIND}#{day.isoformat()}", self.KIND)

    def part_key(self, day: date, n: int) -> tuple[str, str]:
        return (f"{self.KIND}#{day.isoformat()}", f"{self.KIND}#PART#{n:03d}")

    def _put(self, day: date, document: dict[str, Any]) -> None:
        text = json.dumps(document)  # ASCII: a character is a byte
        parts = [
            text[i : i + DOCUMENT_PART_BYTES] for i in range(0, len(text), DOCUMENT_PART_BYTES)
        ]
        parts = parts or [""]
        if len(parts) > DOCUMENT_PARTS:
            raise DocumentTooLarge(
                f"the {self.KIND.lower()} of {day.isoformat()} is {len(text)} bytes of JSON, "
                f"more than the {DOCUMENT_PARTS * DOCUMENT_PART_BYTES} a day's document holds"
            )
        pk, sk = self.key(day)
        head: Item = {"pk": pk, "sk": sk, "kind": self.KIND.lower(), "document": parts[0]}
        if len(parts) > 1:
            head["parts"] = Decimal(len(parts))
        others = [
            Put(
                {
                    "pk": pk,
                    "sk": self.part_key(day, n)[1],
                    "kind": f"{self.KIND.lower()}_part",
                    "document": part,
                }
            )
            for n, part in enumerate(parts[1:], start=1)
        ]
        self.table.transact([Put(head), *others])

    def _get(self, days: Sequence[date]) -> dict[date, dict[str, Any]]:
        heads: dict[date, Item] = {}
        for item in self.table.batch_get([self.key(d) for d in days]):
            heads[date.fromisoformat(str(item["pk"]).removeprefix(f"{self.KIND}#"))] = item
        wanted = [
            self.part_key(day, n)
            for day, head in heads.items()
            for n in range(1, int(head.get("parts", 1)))
        ]
        parts = {
            (str(i["pk"]), str(i["sk"])): str(i["document"]) for i in self.table.batch_get(wanted)
        }
        found: dict[date, dict[str, Any]] = {}
        for day, head in heads.items():
            rest = [parts[self.part_key(day, n)] for n in range(1, int(head.get("parts", 1)))]
            found[day] = json.loads(str(head["document"]) + "".join(rest))
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
