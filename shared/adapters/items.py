"""What an item of the ledger table may be: DynamoDB's item size rule (the in-memory
table refuses what DynamoDB would), copies of items that share nothing a caller could
change (what the in-memory table stores and returns), and an item as JSON (what tests
measure with)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from datetime import datetime
from decimal import Decimal
from typing import Any

# DynamoDB's limit: 400 KB, attribute names and values together.
MAX_ITEM_BYTES = 400 * 1024


class ItemTooLarge(Exception):
    """An item above DynamoDB's size limit: nothing was written."""

    def __init__(self, key: tuple[str, str]) -> None:
        super().__init__(f"item {key} is over DynamoDB's {MAX_ITEM_BYTES:,}-byte limit")
        self.key = key


def _value_size(value: Any) -> int:
    if isinstance(value, str):
        return len(value.encode())
    if isinstance(value, bytes):
        return len(value)
    if isinstance(value, bool) or value is None:
        return 1
    if isinstance(value, int | Decimal | float):
        return len(str(value))
    if isinstance(value, set | frozenset):
        return sum(_value_size(v) for v in value)
    if isinstance(value, Mapping):
        return 3 + sum(len(str(k).encode()) + _value_size(v) + 1 for k, v in value.items())
    return 3 + sum(_value_size(v) + 1 for v in value)


def value_size(value: Any) -> int:
    """A value's size as DynamoDB counts it. Strings and numbers (most values) are
    counted here, the rest by ``_value_size``; an ASCII string (``isascii`` reads a flag
    CPython keeps on each string) is as long in UTF-8 as in characters, so it is not
    encoded."""
    kind = type(value)
    if kind is str:
        return len(value) if value.isascii() else len(value.encode())
    if kind is int or kind is Decimal:
        return len(str(value))
    return _value_size(value)


def name_size(name: str) -> int:
    """An attribute name's part of its item's size (the value's: ``value_size``)."""
    return len(name) if name.isascii() else len(name.encode())


def item_size(item: Mapping[str, Any]) -> int:
    """An item's size as DynamoDB counts it (names and values, UTF-8): the sum of its
    ``name_size`` and ``value_size``, the names counted together (UTF-8 lengths add up)."""
    names = "".join(item)
    size = len(names) if names.isascii() else len(names.encode())
    for value in item.values():
        kind = type(value)
        if kind is str:
            size += len(value) if value.isascii() else len(value.encode())
        elif kind is int or kind is Decimal:
            size += len(str(value))
        else:
            size += _value_size(value)
    return size


# Values a copy may share, being immutable: strings, numbers, booleans, None, bytes.
ATOMIC_TYPES = frozenset({str, int, Decimal, bool, type(None), float, bytes})


def _fresh(value: Any) -> Any:
    """A copy of a set, map or list that nobody else holds, all the way down."""
    if isinstance(value, set):
        return set(value)
    if isinstance(value, dict):
        return {k: _fresh(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_fresh(v) for v in value]
    return value


def mutable_names(item: Mapping[str, Any]) -> tuple[str, ...]:
    """The attributes of ``item`` whose values are not ``ATOMIC_TYPES`` (sets, maps, lists):
    the ones a copy must copy."""
    return tuple([k for k, v in item.items() if type(v) not in ATOMIC_TYPES])


def copy_item(item: Mapping[str, Any], mutable: Sequence[str] | None = None) -> dict[str, Any]:
    """A copy of ``item`` sharing nothing a caller could change. ``mutable``: its
    ``mutable_names`` when known (else found), the only values copied."""
    copied = dict(item)
    for name in mutable_names(item) if mutable is None else mutable:
        if name in copied:
            copied[name] = _fresh(copied[name])
    return copied


class SizedItem:
    """An item with what the in-memory table keeps beside it: its ``item_size`` (for the
    limit, adjusted as updates change attributes) and its ``mutable_names`` (what a
    read's copy must copy)."""

    __slots__ = ("item", "mutable", "size")

    def __init__(self, item: dict[str, Any], mutable: tuple[str, ...], size: int) -> None:
        self.item, self.mutable, self.size = item, mutable, size

    @classmethod
    def counted(cls, item: dict[str, Any]) -> SizedItem:
        """``item`` itself, counted whole."""
        return cls(item, mutable_names(item), item_size(item))

    @classmethod
    def copied(cls, item: Mapping[str, Any]) -> SizedItem:
        """``copy_item(item)``, counted whole (what a Put stores)."""
        mutable = mutable_names(item)
        copied = copy_item(item, mutable)
        return cls(copied, mutable, item_size(copied))

    def copy(self) -> dict[str, Any]:
        """The item as a read returns it: sharing nothing a caller could change."""
        return copy_item(self.item, self.mutable)

    def projected(self, attributes: AbstractSet[str]) -> dict[str, Any]:
        """``copy()`` of the ``attributes`` only, in the item's order."""
        item = self.item
        return copy_item(
            {name: item[name] for name in filter(attributes.__contains__, item)}, self.mutable
        )


def json_default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, set):
        return sorted(value)
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(type(value))


def dump(item: Mapping[str, Any]) -> str:
    return json.dumps(item, default=json_default, sort_keys=True)
