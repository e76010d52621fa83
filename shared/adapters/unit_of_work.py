"""The operations of one event, written together (one transaction), and remembered by
the stores once written."""

from __future__ import annotations

from collections.abc import Sequence

from shared.adapters.table import Operation, Table


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
