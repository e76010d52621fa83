"""AWS calls counted with botocore event hooks; the ledger's table calls by the table.

``before-call.*.*`` counts every call of every client made from boto3's default
session (the handlers' ``shared.app.runtime.Runtime.client`` uses it; the emulator
gives boto3 a new default session, so register after it started: ``default_events``).

Local mode keeps the ledger's table in memory: ``CountingTable`` is that table
(``MemoryTable``) recording each of its calls as the DynamoDB call ``DynamoTable`` would
make for it (GetItem; PutItem or UpdateItem for one write, TransactWriteItems for more;
Query; BatchGetItem), with the touched items' sizes (DynamoDB's item-size rules,
``shared.adapters.items.item_size``) before and after, and the indexes they are in.

On-demand request units are estimated from those sizes with DynamoDB's published
rules: a write is ceil(size / 1 KB) WRU, the larger of the item before and after,
doubled inside a transaction, plus ceil(size / 1 KB) for every GSI holding the new item
(all GSIs project ALL) and 1 for every GSI entry removed; a strongly consistent read
ceil(bytes / 4 KB) RRU, eventually consistent (every GSI Query) half that. A DynamoDB
write seen only on the wire (``--emulator full``, ``bench.reads``) is counted, its units
are not measured (``wru_measured`` False): the request alone does not give the sizes.

The hooks' own time is summed in ``overhead_s`` so the replay rate can leave it out.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from shared.adapters import ledger_schema as schema
from shared.adapters.items import item_size as stored_size
from shared.adapters.table import Item, Key, MemoryTable, Operation, Put

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
    wru_measured: bool = True
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
        if service == "dynamodb" and operation in DDB_WRITES:
            try:
                touched, call.condition_checks = _touched(operation, self._params)
                call.items_written = len(touched)
            except (KeyError, TypeError, ValueError):
                pass
            call.wru_measured = False  # sizes are the table's, not the request's
        self.overhead_s += time.perf_counter() - t0

    def after_call(self, event_name: str, parsed: dict[str, Any], **_: Any) -> None:
        if not self.calls or self.calls[-1].service != "dynamodb":
            return
        t0 = time.perf_counter()
        call, params = self.calls[-1], self._params
        call.failed = "Error" in parsed
        try:
            if call.operation == "GetItem":
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
        "writes_without_units": sum(1 for c in ddb if not c.wru_measured),
        "rru": sum(c.rru for c in calls),
        "bytes_read": sum(c.bytes_read for c in calls),
        "items_read": sum(c.items_read for c in calls),
        "kinds_written": dict(written),
        "ops": dict(ops),
    }


def default_events() -> Any:
    """The event system of boto3's default session (made now if there is none), the one
    the handlers' clients come from."""
    import boto3

    if boto3.DEFAULT_SESSION is None:
        boto3.setup_default_session()
    assert boto3.DEFAULT_SESSION is not None
    return boto3.DEFAULT_SESSION.events


def _stored(item: Mapping[str, Any]) -> Stored:
    return Stored(stored_size(item), str(item.get("kind", "?")), frozenset(indexes_of(set(item))))


class CountingTable(MemoryTable):
    """The in-memory ledger table, recording each call in ``counter`` as the DynamoDB call
    ``DynamoTable`` would make for it, with its estimated request units (module doc)."""

    def __init__(self, counter: CallCounter) -> None:
        super().__init__()
        self.counter = counter

    def _call(self, operation: str) -> Call:
        call = Call("dynamodb", operation)
        self.counter.calls.append(call)
        return call

    def _read(self, call: Call, items: list[Item], strong: bool) -> None:
        t0 = time.perf_counter()
        size = sum(stored_size(i) for i in items)
        call.bytes_read += size
        call.items_read += len(items)
        call.rru = max(1, math.ceil(call.bytes_read / 4096)) * (1.0 if strong else 0.5)
        self.counter.overhead_s += time.perf_counter() - t0

    def get(self, pk: str, sk: str) -> Item | None:
        call = self._call("GetItem")
        item = super().get(pk, sk)
        self._read(call, [item] if item is not None else [], strong=True)
        return item

    def batch_get(self, keys: Sequence[Key]) -> list[Item]:
        call = self._call("BatchGetItem")
        items = super().batch_get(keys)
        t0 = time.perf_counter()
        call.items_read = len(items)
        call.bytes_read = sum(stored_size(i) for i in items)
        call.rru = sum(max(1, math.ceil(stored_size(i) / 4096)) * 0.5 for i in items)
        self.counter.overhead_s += time.perf_counter() - t0
        return items

    def query(self, pk: str, **kwargs: Any) -> Iterator[Item]:
        call = self._call("Query")
        items = list(super().query(pk, **kwargs))
        self._read(call, items, strong=not kwargs.get("index"))
        return iter(items)

    def transact(self, operations: Sequence[Operation]) -> None:
        if not operations:
            return
        single = len(operations) == 1
        name = (
            ("PutItem" if isinstance(operations[0], Put) else "UpdateItem")
            if single
            else "TransactWriteItems"
        )
        call = self._call(name)
        call.items_written = len(operations)
        t0 = time.perf_counter()
        before = {op.key: self.items.get(op.key) for op in operations}
        old = {k: _stored(v) if v is not None else None for k, v in before.items()}
        self.counter.overhead_s += time.perf_counter() - t0
        try:
            super().transact(operations)
        except Exception:
            call.failed = True
            raise
        finally:
            t0 = time.perf_counter()
            factor = 1.0 if single else 2.0
            for key, was in old.items():
                now_item = self.items.get(key)
                new = _stored(now_item) if now_item is not None and not call.failed else None
                size = max(new.size if new else 0, was.size if was else 0, 1)
                units = math.ceil(size / 1024) * factor
                if new is not None:
                    units += math.ceil(new.size / 1024) * len(new.indexes)
                    units += len((was.indexes if was else frozenset()) - new.indexes)
                seen = new or was
                call.writes.append(Write(seen.kind if seen else "?", new.size if new else 0, units))
                call.wru += units
            self.counter.overhead_s += time.perf_counter() - t0

    def stored(self) -> list[Stored]:
        """Every item of the table (no call: nothing counted)."""
        return [_stored(item) for item in self.items.values()]
