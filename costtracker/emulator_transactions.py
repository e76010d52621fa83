"""TransactWriteItems on the embedded emulator without moto's expression machinery, for
the transactions this project writes.

moto parses every entry's ConditionExpression three times (the request's validation,
the transaction, then the Put or Update it calls) and its UpdateExpression twice, and
every parse walks a syntax tree: a state event's transaction of three entries cost
about three bare UpdateItems, and transactions were most of a replay's time. The
ledger's adapter (``shared.adapters.table``) writes a small, fixed grammar only:
entries are Put or Update, in the update and condition grammar that
``costtracker.emulator_updates`` reads (``actions_of``, ``checks_of``).

This module checks such a transaction the way moto does (one entry per item, keys
present and not empty, every name and value used, conditions compared on moto's own
cast values), writes nothing unless every condition holds, and answers a refusal with
moto's own ``TransactionCanceledException`` and cancellation reasons. Everything else
(other grammar or operations, a refusal other than a condition, an item over the size
limit, a table with a stream) goes to moto unchanged, before anything is written.
``tests/integration/test_emulator_speedups.py`` runs random transactions through both
paths and compares outcomes and items.
"""

from __future__ import annotations

import re
from typing import Any

from costtracker.emulator_items import too_large
from costtracker.emulator_updates import (
    Action,
    Unsupported,
    actions_of,
    checks_of,
    holds,
    updated_attributes,
)

_PLACEHOLDER = re.compile(r"[#:][A-Za-z0-9_]+")

# Tests turn the fast path off to compare it with moto's own.
ENABLED = True


def _all_used(entry: dict[str, Any]) -> None:
    """moto (and DynamoDB) refuse a name or value the expressions do not use."""
    used = set(
        _PLACEHOLDER.findall(
            f"{entry.get('ConditionExpression', '')} {entry.get('UpdateExpression', '')}"
        )
    )
    declared = set(entry.get("ExpressionAttributeNames") or {}) | set(
        entry.get("ExpressionAttributeValues") or {}
    )
    if declared - used or entry.get("ExpressionAttributeValues") == {}:
        raise Unsupported


def _plan(backend: Any, entries: list[dict[str, Any]]) -> list[tuple[Any, Any, Any, Any, Any]]:
    """Per entry: (table, hash value, range value, checks, the update's actions or the
    Put's item, built and measured here)."""
    from moto.dynamodb.exceptions import ItemSizeTooLarge
    from moto.dynamodb.models.dynamo_type import DynamoType, Item

    if not entries or len(entries) > 100:
        raise Unsupported
    plan: list[tuple[Any, Any, Any, Any, Any]] = []
    seen: set[tuple[str, Any, Any]] = set()
    for entry in entries:
        if len(entry) != 1:
            raise Unsupported
        ((kind, op),) = entry.items()
        if kind not in ("Put", "Update") or op.get("ReturnValuesOnConditionCheckFailure"):
            raise Unsupported
        table = backend.tables.get(op.get("TableName"))
        if table is None or table.stream_shard is not None or not table.range_key_attr:
            raise Unsupported
        _all_used(op)
        key_names = (table.hash_key_attr, table.range_key_attr)
        source = op["Item"] if kind == "Put" else op["Key"]
        if kind == "Update" and set(source) != set(key_names):
            raise Unsupported
        raw_keys = [source.get(n) for n in key_names]
        if any(
            not isinstance(raw, dict) or raw.get("S") in (None, "") or len(raw) != 1
            for raw in raw_keys
        ) or (table.hash_key_type, table.range_key_type) != ("S", "S"):
            raise Unsupported
        h, r = DynamoType(raw_keys[0]), DynamoType(raw_keys[1])
        if (op["TableName"], h, r) in seen:
            raise Unsupported  # moto raises its "multiple operations on one item"
        seen.add((op["TableName"], h, r))
        names = op.get("ExpressionAttributeNames") or {}
        values = op.get("ExpressionAttributeValues") or {}
        checks = checks_of(op.get("ConditionExpression"), names, values)
        if kind == "Put":
            table._validate_item_types(op["Item"])
            table._validate_key_sizes(op["Item"])
            try:  # moto's item, refused above its size limit
                item = Item(h, r, op["Item"])
            except ItemSizeTooLarge:
                raise Unsupported from None
            plan.append((table, h, r, checks, ("put", item)))
            continue
        actions: list[Action] | None = actions_of(op.get("UpdateExpression", ""), names, values)
        if actions is None or any(name in key_names for _, name, _ in actions):
            raise Unsupported
        plan.append((table, h, r, checks, ("update", actions)))
    return plan


def patch_moto_transactions_fast() -> None:
    """Install the TransactWriteItems fast path once per process (idempotent)."""
    from moto.core.responses import ActionResult
    from moto.dynamodb.exceptions import TransactionCanceledException
    from moto.dynamodb.models.dynamo_type import LimitedSizeDict
    from moto.dynamodb.responses import DynamoHandler

    if getattr(DynamoHandler, "_costtracker_transactions", False):
        return
    original = DynamoHandler.transact_write_items

    def transact_write_items(self: Any) -> Any:
        if not ENABLED:
            return original(self)
        try:
            plan = _plan(self.dynamodb_backend, self.body["TransactItems"])
            current = [table.get_item(h, r) for table, h, r, _, _ in plan]
            failed = [not holds(entry[3], item) for entry, item in zip(plan, current, strict=True)]
            writes: list[dict[str, Any] | None] = []
            for entry, item, refused in zip(plan, current, failed, strict=True):
                table, h, r, _, (kind, change) = entry
                if refused or kind == "put":
                    writes.append(None)
                    continue
                attrs = updated_attributes(table, item, h, r, change)
                if attrs is None or too_large(attrs):
                    raise Unsupported
                writes.append(attrs)
        except Unsupported:
            return original(self)
        except Exception:
            return original(self)  # moto raises its own validation error
        if any(failed):
            raise TransactionCanceledException(
                [
                    ("ConditionalCheckFailed", "The conditional request failed", None)
                    if refused
                    else (None, None, None)
                    for refused in failed
                ]
            )
        for entry, item, attrs in zip(plan, current, writes, strict=True):
            table, (kind, change) = entry[0], entry[4]
            if kind == "put":  # what moto's put_item does once validated (no stream)
                table.items[entry[1]][entry[2]] = change
            elif attrs is None:
                continue
            elif item is None:
                table.put_item({k: v.to_json() for k, v in attrs.items()})
            else:
                stored = LimitedSizeDict()
                dict.update(stored, attrs)
                item.attrs = stored
        return ActionResult({"ConsumedCapacity": [], "ItemCollectionMetrics": {}})

    DynamoHandler.transact_write_items = transact_write_items  # type: ignore[method-assign]
    DynamoHandler._costtracker_transactions = True  # type: ignore[attr-defined]
