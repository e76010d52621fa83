"""Budgets set through the API and their history (keys in ``shared.adapters.keys``).

A budget is one item of the ``BUDGETS`` partition (one Query reads them all); a budget
deleted through the API stays as a marker, which wins over the one configured in CDK
context. Each change is recorded in the budget's history partition in the same
transaction as the budget itself.

The ``RECIPIENTS`` partition records the email subscriptions the API made for budget
recipients (address -> subscription ARN): the API unsubscribes only these, never one the
stack made or finance's own unfiltered subscription to the same address.
"""

from __future__ import annotations

import json
import time
from typing import Any

from shared.adapters.table import Absent, Item, Put, Table
from shared.config.budgets import Budget

BUDGETS = "BUDGETS"
RECIPIENTS = "RECIPIENTS"
# The ARN of a subscription the API is about to make (recorded first, so that a retry after
# a failure between the two writes still knows the subscription is the API's).
SUBSCRIBING = "subscribing"


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

    def api_subscriptions(self) -> dict[str, str]:
        """address (lower case) -> the ARN of the subscription the API made for it (or
        ``SUBSCRIBING`` while it is being made); one Query."""
        return {
            str(i["sk"]): str(i["subscription_arn"])
            for i in self.table.query(RECIPIENTS)
            if i.get("subscription_arn")
        }

    def record_api_subscription(self, email: str, subscription_arn: str) -> None:
        self.table.transact([Put(_recipient_item(email, subscription_arn))])

    def clear_api_subscription(self, email: str) -> None:
        """The API's subscription of ``email`` is gone (a marker: the API only puts)."""
        self.table.transact([Put(_recipient_item(email, ""))])

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


def _recipient_item(email: str, subscription_arn: str) -> Item:
    return {
        "pk": RECIPIENTS,
        "sk": email.lower(),
        "kind": "recipient_subscription",
        "subscription_arn": subscription_arn,
    }
