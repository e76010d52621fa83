"""The in-memory table's own shortcuts against the plain rules they stand for: its item
size count and its copies (a reader never holds a stored value). The contract suite
runs the cases that DynamoDB answers the same; these are the ones only the twin can
answer exactly."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import pytest

from shared.adapters.items import MAX_ITEM_BYTES, ItemTooLarge, item_size
from shared.adapters.table import Item, MemoryTable, Put, Update


def _size_by_the_rule(value: Any) -> int:
    """DynamoDB's rule as written once: every string encoded, every number as text."""
    if isinstance(value, str):
        return len(value.encode())
    if isinstance(value, bytes):
        return len(value)
    if isinstance(value, bool) or value is None:
        return 1
    if isinstance(value, int | Decimal | float):
        return len(str(value))
    if isinstance(value, set | frozenset):
        return sum(_size_by_the_rule(v) for v in value)
    if isinstance(value, Mapping):
        return 3 + sum(len(str(k).encode()) + _size_by_the_rule(v) + 1 for k, v in value.items())
    return 3 + sum(_size_by_the_rule(v) + 1 for v in value)


ITEMS: list[Item] = [
    {"pk": "P", "sk": "S"},
    {"pk": "J#é", "sk": "H#€", "naïve": "日本語", "emoji": "😀x", "n": Decimal("-12.50")},
    {"pk": "P", "sk": "S", "i": 7, "big": 10**30, "f": 1.5, "t": True, "f0": False, "z": None},
    {"pk": "P", "sk": "S", "b": b"\x00\xff", "tags": {"a", "ü"}, "nums": {Decimal(1), 22}},
    {"pk": "P", "sk": "S", "m": {"k": "v", "ñ": [1, "two", {"x": {"y"}}]}, "l": [["a", "b"]]},
    {"pk": "P", "sk": "S", "empty": "", "e_map": {}, "e_list": [], "t2": ("a", Decimal(3))},
]


@pytest.mark.parametrize("item", ITEMS)
def test_item_size_is_the_rule_for_every_kind_of_value(item: Item) -> None:
    by_rule = sum(len(name.encode()) + _size_by_the_rule(v) for name, v in item.items())
    assert item_size(item) == by_rule


@pytest.mark.parametrize("char", ["x", "é", "€", "😀"])  # 1 to 4 bytes in UTF-8
def test_an_item_of_exactly_the_limit_is_kept_and_one_byte_more_refused(char: str) -> None:
    table = MemoryTable()
    base = {"pk": "S", "sk": "edge", "pad": ""}
    room = MAX_ITEM_BYTES - item_size(base)
    blob = char * (room // len(char.encode())) + "y" * (room % len(char.encode()))
    at_limit = {**base, "pad": blob}
    assert item_size(at_limit) == MAX_ITEM_BYTES
    table.transact([Put(at_limit)])
    assert table.get("S", "edge") == at_limit
    with pytest.raises(ItemTooLarge):
        table.transact([Put({**at_limit, "pad": blob + "y"})])
    with pytest.raises(ItemTooLarge):
        table.transact([Update("S", "edge", set={"n": 1})])  # 2 bytes more
    assert table.get("S", "edge") == at_limit


def test_nothing_a_caller_holds_is_a_stored_value() -> None:
    table = MemoryTable()
    item: Item = {"pk": "P", "sk": "S", "l": [["a"]], "m": {"k": {"x"}}, "s": {"a"}}
    table.transact([Put(item)])
    item["l"][0].append("b")
    item["m"]["k"].add("y")
    stored = {"pk": "P", "sk": "S", "l": [["a"]], "m": {"k": {"x"}}, "s": {"a"}}
    assert table.get("P", "S") == stored
    for read in (
        table.get("P", "S"),
        next(table.query("P")),
        next(table.query("P", attributes=("l", "m", "s"))),
        table.batch_get([("P", "S")])[0],
    ):
        assert read is not None
        read["l"][0].append("c")
        read["m"]["k"].add("z")
        read["s"].add("b")
    table.transact([Update("P", "S", set={"n": 1})])  # an update keeps its own copies too
    assert table.get("P", "S") == stored | {"n": 1}
