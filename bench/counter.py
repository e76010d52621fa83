"""AWS calls counted with botocore event hooks; DynamoDB items and capacity from the emulator.

``before-call.*.*`` counts every call of every client made from boto3's default
session (the handlers' ``shared.app.runtime.Runtime.client`` uses it). For DynamoDB the
request parameters (``before-parameter-build``) name the items a write touches:
one for PutItem / UpdateItem / DeleteItem, one per entry of ``TransactItems``
(a ConditionCheck entry is counted apart: it writes nothing) and of
``RequestItems`` for BatchWriteItem. The emulator runs in this process, so each
touched item is looked up in moto's table before and after the call: its size
(moto's size rules, the ones behind the 400 KB limit) and the indexes it is in.

On-demand request units are estimated from those sizes with DynamoDB's published
rules (moto reports no consumed capacity): a write is ceil(size / 1 KB) WRU, the
larger of the item before and after, doubled inside a transaction, plus
ceil(size / 1 KB) for every GSI holding the new item (all GSIs project ALL) and 1
for every GSI entry removed; a strongly consistent read ceil(bytes / 4 KB) RRU,
eventually consistent (every GSI Query) half that.

The hooks' own time is summed in ``overhead_s`` so the replay rate can leave it out.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from shared.adapters import ledger_schema as schema

DDB_READS = ("GetItem", "Query", "BatchGetItem")
DDB_WRITES = ("PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems")
INDEX_KEYS = {i.name: (i.partition_key, i.sort_key) for i in schema.INDEXES}


def indexes_of(attribute_names: set[str]) -> set[str]:
    return {
        name
        for name, (pk, sk) in INDEX_KEYS.items()
        if pk in attribute_names and sk in attribute_names
    }


def value_size(value: dict[str, Any]) -> int:
    """Approximate stored size of one DynamoDB-JSON value (AWS's item-size rules)."""
    from decimal import Decimal

    ((kind, v),) = value.items()
    if kind == "S":
        return len(v.encode())
    if kind == "N":
        digits = len(str(Decimal(v)).replace("-", "").replace(".", "").lstrip("0")) or 1
        return math.ceil(digits / 2) + 1
    if kind == "B":
        return len(v) * 3 // 4
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "L":
        return 3 + sum(value_size(x) + 1 for x in v)
    if kind == "M":
        return 3 + sum(len(k.encode()) + value_size(x) + 1 for k, x in v.items())
    if kind in ("SS", "NS", "BS"):
        return sum(value_size({kind[0]: x}) for x in v)
    return 0


def item_size(item: dict[str, Any]) -> int:
    """Size of a DynamoDB-JSON item (a read's response)."""
    return sum(len(k.encode()) + value_size(v) for k, v in item.items())


@dataclass(frozen=True)
class Stored:
    """One item as the emulator holds it: size, kind and the indexes it is in."""

    size: int
    kind: str
    indexes: frozenset[str]


def _moto_table(name: str) -> Any:
    from moto.dynamodb.models import dynamodb_backends

    for account in list(dynamodb_backends.keys()):
        for region in list(dynamodb_backends[account].keys()):
            table = dynamodb_backends[account][region].tables.get(name)
            if table is not None:
                return table
    return None


def stored_item(table_name: str, key: dict[str, Any]) -> Stored | None:
    """The item under ``key`` (DynamoDB JSON) in the in-process emulator, or None."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    table = _moto_table(table_name)
    if table is None:
        return None
    try:
        h = DynamoType(key[table.hash_key_attr])
        bucket = table.items.get(h)
        if bucket is None:
            return None
        item = bucket.get(DynamoType(key[table.range_key_attr])) if table.range_key_attr else bucket
    except (KeyError, TypeError):
        return None
    if item is None:
        return None
    kind = item.attrs.get("kind")
    return Stored(
        item.size(),
        str(kind.value) if kind is not None else "?",
        frozenset(indexes_of(set(item.attrs))),
    )


@dataclass
class Write:
    """One item written by a call."""

    kind: str
    size: int
    wru: float


@dataclass
class Call:
    service: str
    operation: str
    items_written: int = 0
    condition_checks: int = 0
    wru: float = 0.0
    rru: float = 0.0
    bytes_read: int = 0
    items_read: int = 0
    failed: bool = False
    writes: list[Write] = field(default_factory=list)


def _touched(
    operation: str, params: dict[str, Any]
) -> tuple[list[tuple[str, dict[str, Any]]], int]:
    """(table, key) of every item a write request touches, and its ConditionChecks."""
    keys: list[tuple[str, dict[str, Any]]] = []
    checks = 0
    if operation == "PutItem":
        keys.append((params["TableName"], params["Item"]))
    elif operation in ("UpdateItem", "DeleteItem"):
        keys.append((params["TableName"], params["Key"]))
    elif operation == "TransactWriteItems":
        for entry in params.get("TransactItems", []):
            ((op_type, op),) = entry.items()
            if op_type == "ConditionCheck":
                checks += 1
                continue
            keys.append((op["TableName"], op["Item"] if op_type == "Put" else op["Key"]))
    elif operation == "BatchWriteItem":
        for table, requests in params.get("RequestItems", {}).items():
            for request in requests:
                if "PutRequest" in request:
                    keys.append((table, request["PutRequest"]["Item"]))
                elif "DeleteRequest" in request:
                    keys.append((table, request["DeleteRequest"]["Key"]))
    return keys, checks


def _key_only(table_name: str, item: dict[str, Any]) -> dict[str, Any]:
    return {k: item[k] for k in (schema.PARTITION_KEY, schema.SORT_KEY) if k in item}


@dataclass
class CallCounter:
    calls: list[Call] = field(default_factory=list)
    overhead_s: float = 0.0
    _params: dict[str, Any] = field(default_factory=dict)
    _before: list[tuple[str, dict[str, Any], Stored | None]] = field(default_factory=list)

    # -- hooks ---------------------------------------------------------------------
    def before_parameter_build(self, params: dict[str, Any], **_: Any) -> None:
        self._params = params

    def before_call(self, event_name: str, **kwargs: Any) -> None:
        t0 = time.perf_counter()
        _, service, operation = event_name.split(".", 2)
        call = Call(service, operation)
        self.calls.append(call)
        self._before = []
        if service == "dynamodb" and operation in DDB_WRITES:
            try:
                touched, call.condition_checks = _touched(operation, self._params)
                call.items_written = len(touched)
                self._before = [
                    (t, _key_only(t, k), stored_item(t, _key_only(t, k))) for t, k in touched
                ]
            except (KeyError, TypeError, ValueError):
                pass
        self.overhead_s += time.perf_counter() - t0

    def after_call(self, event_name: str, parsed: dict[str, Any], **_: Any) -> None:
        if not self.calls or self.calls[-1].service != "dynamodb":
            return
        t0 = time.perf_counter()
        call, params = self.calls[-1], self._params
        call.failed = "Error" in parsed
        try:
            if call.operation in DDB_WRITES:
                factor = 2.0 if call.operation == "TransactWriteItems" else 1.0
                for table, key, old in self._before:
                    new = stored_item(table, key)
                    size = max(new.size if new else 0, old.size if old else 0, 1)
                    units = math.ceil(size / 1024) * factor
                    if new is not None and not call.failed:
                        units += math.ceil(new.size / 1024) * len(new.indexes)
                        units += len((old.indexes if old else frozenset()) - new.indexes)
                    seen = new or old
                    kind = seen.kind if seen is not None else "?"
                    call.writes.append(Write(kind, new.size if new else 0, units))
                    call.wru += units
            elif call.operation == "GetItem":
                got = parsed.get("Item") or {}
                call.bytes_read = item_size(got)
                call.items_read = 1 if got else 0
                strong = bool(params.get("ConsistentRead"))
                call.rru = max(1, math.ceil(call.bytes_read / 4096)) * (1.0 if strong else 0.5)
            elif call.operation == "Query":
                items = parsed.get("Items", [])
                call.bytes_read = sum(item_size(i) for i in items)
                call.items_read = len(items)
                strong = bool(params.get("ConsistentRead")) and "IndexName" not in params
                call.rru = max(1, math.ceil(call.bytes_read / 4096)) * (1.0 if strong else 0.5)
            elif call.operation == "BatchGetItem":
                items = [i for rows in parsed.get("Responses", {}).values() for i in rows]
                call.bytes_read = sum(item_size(i) for i in items)
                call.items_read = len(items)
                call.rru = sum(max(1, math.ceil(item_size(i) / 4096)) * 0.5 for i in items)
        except (KeyError, TypeError, ValueError):
            pass
        self.overhead_s += time.perf_counter() - t0

    # -- registration ----------------------------------------------------------------
    def register(self, events: Any) -> None:
        events.register("before-parameter-build.dynamodb.*", self.before_parameter_build)
        events.register("before-call.*.*", self.before_call)
        events.register("after-call.dynamodb.*", self.after_call)

    def unregister(self, events: Any) -> None:
        events.unregister("before-parameter-build.dynamodb.*", self.before_parameter_build)
        events.unregister("before-call.*.*", self.before_call)
        events.unregister("after-call.dynamodb.*", self.after_call)

    def since(self, mark: int) -> list[Call]:
        return self.calls[mark:]


def summarize(calls: list[Call]) -> dict[str, Any]:
    """One invocation's calls: DynamoDB reads / writes / scans, items written, units."""
    ops = Counter(f"{c.service}.{c.operation}" for c in calls)
    ddb = [c for c in calls if c.service == "dynamodb"]
    ddb_reads = sum(1 for c in ddb if c.operation in DDB_READS)
    ddb_writes = sum(1 for c in ddb if c.operation in DDB_WRITES)
    scans = sum(1 for c in ddb if c.operation == "Scan")
    written = Counter(w.kind for c in ddb for w in c.writes)
    return {
        "total": len(calls),
        "ddb_calls": len(ddb),
        "ddb_reads": ddb_reads,
        "ddb_writes": ddb_writes,
        "transactions": sum(1 for c in ddb if c.operation == "TransactWriteItems"),
        "items_written": sum(c.items_written for c in ddb),
        "condition_checks": sum(c.condition_checks for c in ddb),
        "failed_writes": sum(1 for c in ddb if c.failed and c.operation in DDB_WRITES),
        "scans": scans,
        "other": len(calls) - len(ddb),
        "wru": sum(c.wru for c in calls),
        "rru": sum(c.rru for c in calls),
        "bytes_read": sum(c.bytes_read for c in calls),
        "items_read": sum(c.items_read for c in calls),
        "kinds_written": dict(written),
        "ops": dict(ops),
    }


def table_items(table_name: str) -> list[Stored]:
    """Every item of a table in the in-process emulator (no API call: nothing counted)."""
    table = _moto_table(table_name)
    if table is None:
        return []
    out = []
    for bucket in list(table.items.values()):
        items = list(bucket.values()) if table.range_key_attr else [bucket]
        for item in items:
            kind = item.attrs.get("kind")
            out.append(
                Stored(
                    item.size(),
                    str(kind.value) if kind is not None else "?",
                    frozenset(indexes_of(set(item.attrs))),
                )
            )
    return out
