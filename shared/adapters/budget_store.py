"""Budgets set through the API and their history (keys in ``shared.adapters.keys``).

A budget is one item of the ``BUDGETS`` partition (one Query reads them all); a budget
deleted through the API stays as a marker, which wins over the one configured in CDK
context. Each change is recorded in the budget's history partition in the same
transaction as the budget itself.
"""

from __future__ import annotations

import json
import time
from typing import Any

from shared.adapters.table import Absent, Item, Put, Table
from shared.domain.budgets import Budget

BUDGETS = "BUDGETS"


def history_pk(budget_id: str) -> str:
    return f"BUDGETS_HISTORY#{budget_id}"


class BudgetStore:
    def __init__(self, table: Table) -> None:
        self.table = table
        self._last_ns = 0

    def stored_budgets(self) -> dict[str, Budget | None]:
        """Budgets set through the API by id; None marks one deleted through the API."""
        return {
            str(i["sk"]): None if i.get("deleted") else Budget.model_validate_json(i["budget"])
            for i in self.table.query(BUDGETS)
        }

    def put_budget(self, budget: Budget) -> None:
        self.table.transact([Put(_budget_item(budget.budget_id, budget))])

    def delete_budget(self, budget_id: str) -> None:
        self.table.transact([Put(_budget_item(budget_id, None))])

    def put_budget_change(
        self, budget_id: str, after: Budget | None, change: dict[str, Any]
    ) -> None:
        """Set (or, with ``after`` None, delete) a stored budget and record ``change``
        in its history, in one transaction."""
        history: Item = {
            "pk": history_pk(budget_id),
            # <n>: a tie-breaker that keeps changes made in the same instant in order.
            "sk": f"{change['at']}#{self._tick():020d}",
            "kind": "budget_change",
            "change": json.dumps(change),
        }
        self.table.transact([Put(_budget_item(budget_id, after)), Put(history, [Absent()])])

    def budget_history(self, budget_id: str) -> list[dict[str, Any]]:
        """The recorded changes of a budget, oldest first."""
        return [json.loads(i["change"]) for i in self.table.query(history_pk(budget_id))]

    def _tick(self) -> int:
        """Nanoseconds now, strictly increasing within this store."""
        self._last_ns = max(time.time_ns(), self._last_ns + 1)
        return self._last_ns


def _budget_item(budget_id: str, budget: Budget | None) -> Item:
    item: Item = {"pk": BUDGETS, "sk": budget_id, "kind": "budget"}
    if budget is None:
        item["deleted"] = True
    else:
        item["budget"] = budget.model_dump_json()
    return item
