"""Records beside the job ledger, in the same table: budgets set through the API and
their history, the price cache, once-only claims, daily summaries and reconciliations
(keys in ``shared.adapters.keys``). The job ledger itself is ``shared.adapters.ledger_store``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Protocol

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from shared import ledger_schema as schema
from shared.domain.base import Rate
from shared.domain.budgets import Budget

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient
else:
    DynamoDBClient = Any


class Ledger(Protocol):
    """What the services need of the records that are not the job ledger: budgets and
    their history, the price cache, daily summaries and reconciliations. ``InMemoryLedger``
    in tests is its twin."""

    def get_price(self, key: str) -> Rate | None: ...

    def put_price(self, key: str, rate: Rate) -> None: ...

    def claim_once(self, key: str, expires_at: datetime) -> bool:
        """True for the first caller only (once-only work across concurrent runs)."""

    def stored_budgets(self) -> dict[str, Budget | None]:
        """Budgets set through the API by id; None marks one deleted through the API."""

    def put_budget(self, budget: Budget) -> None: ...

    def put_summary(self, day: date, summary: dict[str, Any]) -> None: ...

    def put_reconciliation(self, day: date, result: dict[str, Any]) -> None: ...

    def get_reconciliations(self, days: Sequence[date]) -> dict[date, dict[str, Any]]: ...

    def get_summaries(self, days: Sequence[date]) -> dict[date, dict[str, Any]]: ...

    def delete_budget(self, budget_id: str) -> None: ...

    def put_budget_change(
        self, budget_id: str, after: Budget | None, change: dict[str, Any]
    ) -> None:
        """Set (or, with ``after`` None, delete) a stored budget and record ``change``
        in its history, in one transaction."""

    def budget_history(self, budget_id: str) -> list[dict[str, Any]]:
        """The recorded changes of a budget, oldest first."""


_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


def _to_ddb(item: dict[str, Any]) -> dict[str, Any]:
    return {k: _serializer.serialize(v) for k, v in item.items()}


def _from_ddb(item: dict[str, Any]) -> dict[str, Any]:
    return {k: _deserializer.deserialize(v) for k, v in item.items()}


class DynamoDbLedger:
    """``Ledger`` over one DynamoDB table (single-table design, see ``ledger_schema``)."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name

    def _query(self, **kwargs: Any) -> Iterator[dict[str, Any]]:
        paginator = self._client.get_paginator("query")
        for page in paginator.paginate(TableName=self._table, **kwargs):
            for item in page.get("Items", []):
                yield _from_ddb(item)

    # -- price cache (access pattern 7) ----------------------------------------
    def get_price(self, key: str) -> Rate | None:
        response = self._client.get_item(
            TableName=self._table,
            Key=_to_ddb({schema.PARTITION_KEY: f"PRICE#{key}", schema.SORT_KEY: "PRICE"}),
        )
        if "Item" not in response:
            return None
        return Rate.model_validate_json(_from_ddb(response["Item"])["rate"])

    def put_price(self, key: str, rate: Rate) -> None:
        item = {
            schema.PARTITION_KEY: f"PRICE#{key}",
            schema.SORT_KEY: "PRICE",
            "kind": "price",
            "rate": rate.model_dump_json(),
            "checked_on": rate.checked_on.isoformat(),
        }
        self._client.put_item(TableName=self._table, Item=_to_ddb(item))

    # -- once-only markers -----------------------------------------------------
    def claim_once(self, key: str, expires_at: datetime) -> bool:
        item = {
            schema.PARTITION_KEY: f"ONCE#{key}",
            schema.SORT_KEY: "ONCE",
            "kind": "once",
            schema.TTL_ATTRIBUTE: int(expires_at.timestamp()),
        }
        try:
            self._client.put_item(
                TableName=self._table,
                Item=_to_ddb(item),
                ConditionExpression="attribute_not_exists(pk)",
            )
        except self._client.exceptions.ConditionalCheckFailedException:
            return False
        return True

    # -- budgets (a small partition: Query pk=BUDGETS) ----------------------------
    def stored_budgets(self) -> dict[str, Budget | None]:
        items = self._query(
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues=_to_ddb({":pk": "BUDGETS"}),
        )
        return {
            str(i["sk"]): None if i.get("deleted") else Budget.model_validate_json(i["budget"])
            for i in items
        }

    def put_budget(self, budget: Budget) -> None:
        item = {
            schema.PARTITION_KEY: "BUDGETS",
            schema.SORT_KEY: budget.budget_id,
            "kind": "budget",
            "budget": budget.model_dump_json(),
        }
        self._client.put_item(TableName=self._table, Item=_to_ddb(item))

    def delete_budget(self, budget_id: str) -> None:
        item = {
            schema.PARTITION_KEY: "BUDGETS",
            schema.SORT_KEY: budget_id,
            "kind": "budget",
            "deleted": True,
        }
        self._client.put_item(TableName=self._table, Item=_to_ddb(item))

    # -- budget history (pk=BUDGETS_HISTORY#<id>, sk=<iso time>#<n>; Query by budget) ------
    def put_budget_change(
        self, budget_id: str, after: Budget | None, change: dict[str, Any]
    ) -> None:
        budget: dict[str, Any] = {
            schema.PARTITION_KEY: "BUDGETS",
            schema.SORT_KEY: budget_id,
            "kind": "budget",
        }
        if after is None:
            budget["deleted"] = True
        else:
            budget["budget"] = after.model_dump_json()
        history = {
            schema.PARTITION_KEY: f"BUDGETS_HISTORY#{budget_id}",
            # <n>: a tie-breaker that keeps changes made in the same instant in order.
            schema.SORT_KEY: f"{change['at']}#{time.time_ns():020d}",
            "kind": "budget_change",
            "change": json.dumps(change),
        }
        self._client.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": self._table, "Item": _to_ddb(budget)}},
                {
                    "Put": {
                        "TableName": self._table,
                        "Item": _to_ddb(history),
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
            ]
        )

    def budget_history(self, budget_id: str) -> list[dict[str, Any]]:
        items = self._query(
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues=_to_ddb({":pk": f"BUDGETS_HISTORY#{budget_id}"}),
        )
        return [json.loads(i["change"]) for i in sorted(items, key=lambda i: str(i["sk"]))]

    # -- daily summaries and reconciliations (GetItem / BatchGetItem by date) ----------
    def put_summary(self, day: date, summary: dict[str, Any]) -> None:
        self._put_dated("SUMMARY", day, summary)

    def get_summaries(self, days: Sequence[date]) -> dict[date, dict[str, Any]]:
        return self._get_dated("SUMMARY", days)

    def put_reconciliation(self, day: date, result: dict[str, Any]) -> None:
        self._put_dated("RECONCILIATION", day, result)

    def get_reconciliations(self, days: Sequence[date]) -> dict[date, dict[str, Any]]:
        return self._get_dated("RECONCILIATION", days)

    def _put_dated(self, kind: str, day: date, document: dict[str, Any]) -> None:
        item = {
            schema.PARTITION_KEY: f"{kind}#{day.isoformat()}",
            schema.SORT_KEY: kind,
            "kind": kind.lower(),
            "document": json.dumps(document),
        }
        self._client.put_item(TableName=self._table, Item=_to_ddb(item))

    def _get_dated(self, kind: str, days: Sequence[date]) -> dict[date, dict[str, Any]]:
        found: dict[date, dict[str, Any]] = {}
        keys = [
            {schema.PARTITION_KEY: f"{kind}#{d.isoformat()}", schema.SORT_KEY: kind} for d in days
        ]
        for start in range(0, len(keys), 100):
            request = {self._table: {"Keys": [_to_ddb(k) for k in keys[start : start + 100]]}}
            while request:
                response = self._client.batch_get_item(RequestItems=request)
                for raw in response.get("Responses", {}).get(self._table, []):
                    item = _from_ddb(raw)
                    day = date.fromisoformat(str(item["pk"]).removeprefix(f"{kind}#"))
                    found[day] = json.loads(item["document"])
                request = response.get("UnprocessedKeys") or {}
        return found
