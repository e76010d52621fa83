"""AWS calls counted with botocore event hooks, with DynamoDB capacity estimated from sizes.

``before-call.*.*`` counts every call of every client made from boto3's default
session (the handlers' ``shared.runtime.client`` uses it). For DynamoDB the
request parameters (``before-parameter-build``) and the parsed response
(``after-call``) give item sizes, from which on-demand request units are
estimated with DynamoDB's published rules: a write is ceil(size / 1 KB) WRU in
the table plus the same in every GSI the item is projected into (all GSIs here
project ALL) and 1 WRU per GSI entry removed; a strongly consistent read is
ceil(size / 4 KB) RRU, eventually consistent (every GSI Query) half that.
moto does not report consumed capacity, hence the estimate.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from shared import ledger_schema as schema

DDB_READS = ("GetItem", "Query", "BatchGetItem")
DDB_WRITES = ("PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems")
INDEX_KEYS = {i.name: (i.partition_key, i.sort_key) for i in schema.INDEXES}


def value_size(value: dict[str, Any]) -> int:
    """Approximate stored size of one DynamoDB-JSON value (AWS's item-size rules)."""
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
    return sum(len(k.encode()) + value_size(v) for k, v in item.items())


def indexes_of(attribute_names: set[str]) -> set[str]:
    return {
        name
        for name, (pk, sk) in INDEX_KEYS.items()
        if pk in attribute_names and sk in attribute_names
    }


@dataclass
class Call:
    service: str
    operation: str
    wru: float = 0.0
    rru: float = 0.0
    bytes_read: int = 0
    instance: bool = False  # an instance record read or written


@dataclass
class InstancePut:
    size: int
    transitions: int
    copies: int  # table + GSIs the item is in after the write
    gsi_deletes: int


@dataclass
class CallCounter:
    calls: list[Call] = field(default_factory=list)
    instance_puts: list[InstancePut] = field(default_factory=list)
    item_sizes: dict[str, list[int]] = field(default_factory=dict)  # kind -> sizes written
    _shadow: dict[tuple[str, str], tuple[int, set[str]]] = field(default_factory=dict)
    _params: dict[str, Any] = field(default_factory=dict)

    # -- hooks ---------------------------------------------------------------------
    def before_call(self, event_name: str, **_: Any) -> None:
        _, service, operation = event_name.split(".", 2)
        self.calls.append(Call(service, operation))

    def before_parameter_build(self, params: dict[str, Any], **_: Any) -> None:
        self._params = params

    def after_call(self, event_name: str, parsed: dict[str, Any], **_: Any) -> None:
        if not self.calls or self.calls[-1].service != "dynamodb":
            return
        call, params = self.calls[-1], self._params
        failed = "Error" in parsed
        try:
            if call.operation == "PutItem":
                self._put(call, params["Item"], failed)
            elif call.operation == "UpdateItem":
                self._update(call, params)
            elif call.operation == "DeleteItem":
                key = _key(params["Key"])
                size, _idx = self._shadow.pop(key, (1, set()))
                call.wru = math.ceil(size / 1024) + len(_idx)
            elif call.operation == "GetItem":
                got = parsed.get("Item") or {}
                size = item_size(got)
                call.bytes_read = size
                call.instance = got.get("kind", {}).get("S") == "instance"
                strong = bool(params.get("ConsistentRead"))
                call.rru = max(1, math.ceil(size / 4096)) * (1.0 if strong else 0.5)
            elif call.operation == "Query":
                size = sum(item_size(i) for i in parsed.get("Items", []))
                call.bytes_read = size
                strong = bool(params.get("ConsistentRead")) and "IndexName" not in params
                call.rru = max(1, math.ceil(size / 4096)) * (1.0 if strong else 0.5)
        except (KeyError, TypeError, ValueError):
            pass

    def _put(self, call: Call, item: dict[str, Any], failed: bool) -> None:
        size = item_size(item)
        key = _key(item)
        old_idx = self._shadow.get(key, (0, set()))[1]
        new_idx = indexes_of(set(item))
        units = math.ceil(size / 1024)
        if failed:  # a failed condition still costs the write units of the item's size
            call.wru = units
            return
        deletes = len(old_idx - new_idx)
        call.wru = units * (1 + len(new_idx)) + deletes
        self._shadow[key] = (size, new_idx)
        kind = str(item.get("kind", {}).get("S", "?"))
        self.item_sizes.setdefault(kind, []).append(size)
        if kind == "instance" and "record" in item:
            call.instance = True
            transitions = len(json.loads(item["record"]["S"]).get("transitions", []))
            self.instance_puts.append(InstancePut(size, transitions, 1 + len(new_idx), deletes))

    def _update(self, call: Call, params: dict[str, Any]) -> None:
        key = _key(params["Key"])
        old_size, old_idx = self._shadow.get(key, (0, set()))
        values = params.get("ExpressionAttributeValues", {})
        expression = params.get("UpdateExpression", "")
        # The SET attributes of our updates: names and their values (approximate).
        names = set(params.get("ExpressionAttributeNames", {}).values()) | set(params["Key"])
        names |= {tok.strip().split(" ")[0] for tok in expression.replace("SET ", "").split(",")}
        size = max(
            old_size,
            item_size(params["Key"])
            + sum(value_size(v) for v in values.values())
            + sum(len(n) for n in names),
        )
        new_idx = old_idx | indexes_of(names)
        call.wru = math.ceil(size / 1024) * (1 + len(new_idx))
        self._shadow[key] = (size, new_idx)
        self.item_sizes.setdefault("update:" + key[0].split("#")[0], []).append(size)

    # -- registration ----------------------------------------------------------------
    def register(self, events: Any) -> None:
        events.register("before-call.*.*", self.before_call)
        events.register("before-parameter-build.dynamodb.*", self.before_parameter_build)
        events.register("after-call.dynamodb.*", self.after_call)

    def unregister(self, events: Any) -> None:
        events.unregister("before-call.*.*", self.before_call)
        events.unregister("before-parameter-build.dynamodb.*", self.before_parameter_build)
        events.unregister("after-call.dynamodb.*", self.after_call)

    def since(self, mark: int) -> list[Call]:
        return self.calls[mark:]


def _key(item: dict[str, Any]) -> tuple[str, str]:
    return (
        str(item.get(schema.PARTITION_KEY, {}).get("S", "")),
        str(item.get(schema.SORT_KEY, {}).get("S", "")),
    )


def summarize(calls: list[Call]) -> dict[str, Any]:
    """One invocation's calls: DynamoDB reads / writes / scans, other calls, units."""
    ops = Counter(f"{c.service}.{c.operation}" for c in calls)
    ddb_reads = sum(1 for c in calls if c.service == "dynamodb" and c.operation in DDB_READS)
    ddb_writes = sum(1 for c in calls if c.service == "dynamodb" and c.operation in DDB_WRITES)
    scans = sum(1 for c in calls if c.service == "dynamodb" and c.operation == "Scan")
    return {
        "total": len(calls),
        "ddb_reads": ddb_reads,
        "ddb_writes": ddb_writes,
        "scans": scans,
        "other": len(calls) - ddb_reads - ddb_writes - scans,
        "wru": sum(c.wru for c in calls),
        "rru": sum(c.rru for c in calls),
        "bytes_read": sum(c.bytes_read for c in calls),
        "instance_puts": sum(1 for c in calls if c.instance and c.operation == "PutItem"),
        "instance_gets": sum(1 for c in calls if c.instance and c.operation == "GetItem"),
        "instance_wru": sum(c.wru for c in calls if c.instance and c.operation == "PutItem"),
        "instance_rru": sum(c.rru for c in calls if c.instance and c.operation == "GetItem"),
        "ops": dict(ops),
    }
