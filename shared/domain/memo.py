"""Values of pure functions of frozen records, kept by the record's identity.

By identity, not equality: records that compare equal may still differ in what is made
of them (a threshold of 10 and one of 10.0 are equal, their JSON is not).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

Record = TypeVar("Record")
Value = TypeVar("Value")


class ByIdentity(Generic[Record, Value]):
    """``compute(record)``, kept per record object. A record is held with its value, so
    its id cannot be another record's while kept. Two generations of at most ``size``:
    when the new one is full the old one is dropped, and a record asked for again moves
    to the new one (the records still in use stay, those left behind go).
    Only for records that never change (frozen) and values nobody mutates."""

    def __init__(self, compute: Callable[[Record], Value], size: int = 8192) -> None:
        self._compute = compute
        self._size = size
        self._new: dict[int, tuple[Record, Value]] = {}
        self._old: dict[int, tuple[Record, Value]] = {}

    def __call__(self, record: Record) -> Value:
        kept = self._new.get(id(record))
        if kept is not None and kept[0] is record:
            return kept[1]
        return self._keep(record)

    def _keep(self, record: Record) -> Value:
        """The value of a record not in the new generation: moved from the old one, or
        computed."""
        kept = self._old.get(id(record))
        if kept is None or kept[0] is not record:
            kept = (record, self._compute(record))
        if len(self._new) >= self._size:
            self._old = self._new
            self._new = {}
        self._new[id(record)] = kept
        return kept[1]
