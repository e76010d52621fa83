"""An operation of the ledger table as DynamoDB request parameters.

Each name and each string value gets one placeholder however often the expression says
it (a "raise to at least" condition and its SET name the same attribute and value):
fewer attribute values to serialize on both sides of the wire.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from shared.adapters.table import Absent, Below, Operation, Update, VersionIs

Serializer = Callable[[Mapping[str, Any]], dict[str, Any]]


def write_request(table: str, to: Serializer, op: Operation) -> dict[str, Any]:
    """PutItem or UpdateItem parameters for ``op`` (also a TransactWriteItems member)."""
    names: dict[str, str] = {}
    values: dict[str, Any] = {}
    named: dict[str, str] = {}  # each name and each string value: one placeholder
    said: dict[str, str] = {}

    def name(n: str) -> str:
        if (placeholder := named.get(n)) is None:
            placeholder = named[n] = f"#n{len(names)}"
            names[placeholder] = n
        return placeholder

    def value(v: Any) -> str:
        if type(v) is str and (placeholder := said.get(v)) is not None:
            return placeholder
        placeholder = f":v{len(values)}"
        values[placeholder] = v
        if type(v) is str:
            said[v] = placeholder
        return placeholder

    parts: list[str] = []
    for condition in op.conditions:
        if isinstance(condition, Absent):
            parts.append(f"attribute_not_exists({name('pk')})")
        elif isinstance(condition, VersionIs):
            parts.append(f"{name('version')} = {value(condition.value)}")
        else:
            n, sign = name(condition.name), "<" if isinstance(condition, Below) else ">"
            parts.append(f"(attribute_not_exists({n}) OR {n} {sign} {value(condition.value)})")
    out: dict[str, Any] = {"TableName": table}
    if isinstance(op, Update):
        sets = [f"{name(k)} = {value(v)}" for k, v in op.set.items()]
        sets += [
            f"{(n := name(k))} = if_not_exists({n}, {value(v)})"
            for k, v in op.set_if_absent.items()
        ]
        adds = [f"{name(k)} {value(v)}" for k, v in op.add.items()]
        removes = [name(k) for k in op.remove]
        clauses = (("SET", sets), ("ADD", adds), ("REMOVE", removes))
        out["Key"] = to({"pk": op.pk, "sk": op.sk})
        out["UpdateExpression"] = " ".join(f"{v} {', '.join(c)}" for v, c in clauses if c)
    else:
        out["Item"] = to(op.item)
    if parts:
        out["ConditionExpression"] = " AND ".join(parts)
    if names:
        out["ExpressionAttributeNames"] = names
    if values:
        out["ExpressionAttributeValues"] = to(values)
    return out
