"""The operations of one event, written together (one transaction); and an item as
JSON (what tests measure item sizes with)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from shared.adapters.table import Item, Operation, Table


class UnitOfWork:
    """Operations of one event, written together (one transaction), and remembered by
    the stores once written."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.operations: list[Operation] = []

    def add(self, op: Operation | None) -> None:
        if op is not None:
            self.operations.append(op)

    def extend(self, ops: Sequence[Operation | None]) -> None:
        for op in ops:
            self.add(op)

    def commit(self) -> None:
        self.table.transact(self.operations)


def json_default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, set):
        return sorted(value)
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(type(value))


def dump(item: Item) -> str:
    return json.dumps(item, default=json_default, sort_keys=True)
