"""An Update's changes applied to an item (as DynamoDB's UpdateItem applies them), and
what they change in the item's size and in the attributes a copy must copy: the
in-memory table keeps both beside each stored item (``SizedItem``), so a write counts
only the attributes it touches instead of the whole item."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, Protocol

from shared.adapters.items import ATOMIC_TYPES, SizedItem, name_size, value_size

Item = dict[str, Any]
_ABSENT = object()  # an attribute an item does not have (``None`` is a value: NULL)


class Changes(Protocol):
    """What an Update (``shared.adapters.table.Update``) changes in its item."""

    @property
    def add(self) -> Mapping[str, Any]: ...  # numbers, or sets of strings

    @property
    def set(self) -> Mapping[str, Any]: ...

    @property
    def set_if_absent(self) -> Mapping[str, Any]: ...

    @property
    def remove(self) -> Sequence[str]: ...


def apply_changes(item: Item, changes: Changes) -> None:
    """``item`` changed in place (set if absent, set, add, remove, in that order). Its
    values are replaced, never changed, so ``item`` may share them with an item nobody
    changes (the stored version it is a copy of)."""
    for name, value in changes.set_if_absent.items():  # the writer keeps its values
        if name not in item:
            item[name] = value if type(value) in ATOMIC_TYPES else copy.deepcopy(value)
    for name, value in changes.set.items():
        item[name] = value if type(value) in ATOMIC_TYPES else copy.deepcopy(value)
    for name, value in changes.add.items():
        if isinstance(value, set):
            item[name] = set(item.get(name, set())) | value
        else:
            item[name] = Decimal(item.get(name, 0)) + Decimal(value)
    for name in changes.remove:
        item.pop(name, None)


def touched_names(changes: Changes) -> set[str]:
    """The attributes ``changes`` may change: the only ones whose size can change."""
    return {*changes.set_if_absent, *changes.set, *changes.add, *changes.remove}


def updated(stored: SizedItem, changes: Changes, touched: set[str]) -> SizedItem:
    """A new item: ``stored`` after ``changes`` (``touched``: their ``touched_names``),
    ``stored`` untouched. Size and copied names are adjusted for the touched attributes
    only: an item's size is the sum of its attributes'."""
    before = stored.item
    after = dict(before)
    apply_changes(after, changes)
    size = stored.size
    mutable_touched = not touched.isdisjoint(stored.mutable)
    for name in touched:
        old, new = before.get(name, _ABSENT), after.get(name, _ABSENT)
        if new is old:
            continue
        if old is _ABSENT:
            size += name_size(name)
        else:
            size -= value_size(old)
        if new is _ABSENT:
            size -= name_size(name)
        else:
            size += value_size(new)
            mutable_touched = mutable_touched or type(new) not in ATOMIC_TYPES
    if not mutable_touched:  # the usual update: numbers and strings only
        return SizedItem(after, stored.mutable, size)
    mutable = [n for n in stored.mutable if n not in touched]
    mutable += [n for n in touched if n in after and type(after[n]) not in ATOMIC_TYPES]
    return SizedItem(after, tuple(mutable), size)
