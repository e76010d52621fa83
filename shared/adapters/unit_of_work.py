"""The operations of one event, written together (one transaction).

A store stages its operations here and, with them, what its warm copies must do about
the outcome: ``on_commit`` once the transaction is written (keep what was written),
``on_conflict`` when a condition failed (forget what the operations were built from:
it is stale, and the next attempt reads afresh). Callers only stage and commit; no one
outside a store names its copies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from shared.adapters.table import ConditionFailed, Operation, Table

Hook = Callable[[], None]


class UnitOfWork:
    """Operations of one event, written together (one transaction), and what each
    store keeps or forgets once the transaction is written or refused."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.operations: list[Operation] = []
        self._on_commit: list[Hook] = []
        self._on_conflict: list[Hook] = []

    def add(
        self,
        op: Operation | None,
        *,
        on_commit: Hook | None = None,
        on_conflict: Hook | None = None,
    ) -> None:
        """Stage ``op`` (None: nothing to write); the hooks are kept even then (a store
        that read a record and found nothing to change still forgets it on a conflict)."""
        if op is not None:
            self.operations.append(op)
        if on_commit is not None:
            self._on_commit.append(on_commit)
        if on_conflict is not None:
            self._on_conflict.append(on_conflict)

    def extend(self, ops: Sequence[Operation | None]) -> None:
        for op in ops:
            self.add(op)

    def commit(self) -> None:
        """Write every staged operation or none; then the stores keep what was written,
        or, when a condition failed, forget what was read (``ConditionFailed`` is
        raised on)."""
        try:
            self.table.transact(self.operations)
        except ConditionFailed:
            for forget in self._on_conflict:
                forget()
            raise
        for keep in self._on_commit:
            keep()
