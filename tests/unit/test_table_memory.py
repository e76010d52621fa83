"""The in-memory table's own shortcuts against the plain rules they stand for: its item
size count, its sorted partitions (a Query reads a range, not a whole partition) and its
copies (a reader never holds a stored value). The contract suite runs the cases that
DynamoDB answers the same; these are the ones only the twin can answer exactly."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import pytest

from shared.adapters import ledger_schema as schema
from shared.adapters.items import MAX_ITEM_BYTES, ItemTooLarge, item_size, mutable_names
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


# -- queries: the sorted partitions read what a scan of the partition would ----------------

OPEN_PK, OPEN_SK = schema.index_attributes(schema.OPEN_INDEX)
OPEN = schema.OPEN_INDEX.name


def _scanned(table: MemoryTable, pk: str, **kwargs: Any) -> list[Item]:
    """A Query answered the plain way: every item of the table filtered, then sorted
    (equal index sort keys in table key order)."""
    index = kwargs.get("index")
    pk_name, sk_name = table.indexes[index] if index else ("pk", "sk")
    begins, lo, hi = kwargs.get("begins_with"), kwargs.get("sk_from"), kwargs.get("sk_to")
    keep = kwargs.get("keep_from")
    found = [
        (item[sk_name], key, item)
        for key, item in table.items.items()
        if item.get(pk_name) == pk and sk_name in item
        and (begins is None or item[sk_name].startswith(begins))
        and (lo is None or item[sk_name] >= lo)
        and (hi is None or item[sk_name] <= hi)
        and (keep is None or str(item.get(keep[0], keep[1])) >= keep[1])
    ]  # fmt: skip
    found.sort(key=lambda f: (f[0], f[1]), reverse=bool(kwargs.get("descending")))
    items = [f[2] for f in found][: kwargs.get("limit") or None]
    attributes = kwargs.get("attributes")
    return [{k: v for k, v in i.items() if k in attributes} if attributes else i for i in items]


def test_queries_read_what_a_scan_of_the_partition_reads_while_items_move() -> None:
    rng = random.Random(29)
    table = MemoryTable()
    sks = ["A", "E#", "E#1", "E#10", "E#2", "E#2#x", "F", "H#I#a", "H#I#b", "R#", "~", "é"]
    opens = ["OPEN", "ACCRUING"]
    for step in range(600):
        pk, sk = rng.choice(["J#1", "J#2", "J#3"]), rng.choice(sks)
        index_keys = {OPEN_PK: rng.choice(opens), OPEN_SK: rng.choice(sks[:4])}
        extra = {"until": rng.choice(sks)} if rng.random() < 0.5 else {}
        if rng.random() < 0.5:
            table.transact([Put({"pk": pk, "sk": sk, "n": step} | extra | index_keys)])
        else:
            table.transact([Update(pk, sk, set={"n": step} | extra, remove=(OPEN_PK,))])
        for _ in range(3):
            where = rng.choice(["J#1", "J#2", "J#3"])
            kwargs: dict[str, Any] = {
                "begins_with": rng.choice([None, None, "E#", "E#2", "H#", "Z", ""]),
                "sk_from": rng.choice([None, None, "E#", "E#10", "F", "~"]),
                "sk_to": rng.choice([None, None, "E#2", "E#~", "H#I#a", "A"]),
                "descending": rng.random() < 0.5,
                "limit": rng.choice([None, 0, 1, 2, 5]),
                "keep_from": rng.choice([None, ("until", "E#2")]),
                "attributes": rng.choice([(), ("sk", "n")]),
            }
            if rng.random() < 0.3:
                kwargs["index"], where = OPEN, rng.choice(opens)
            assert list(table.query(where, **kwargs)) == _scanned(table, where, **kwargs), kwargs


def test_equal_index_sort_keys_come_in_table_key_order() -> None:
    table = MemoryTable()
    for pk in ["J#3", "J#1", "J#2"]:
        table.transact([Put({"pk": pk, "sk": "H", OPEN_PK: "OPEN", OPEN_SK: "same"})])
    assert [i["pk"] for i in table.query("OPEN", index=OPEN)] == ["J#1", "J#2", "J#3"]
    assert [i["pk"] for i in table.query("OPEN", index=OPEN, descending=True)] == [
        "J#3",
        "J#2",
        "J#1",
    ]


def test_a_key_attribute_that_is_not_a_string_is_refused_and_nothing_is_written() -> None:
    table = MemoryTable()
    with pytest.raises(ValueError, match="key attribute"):
        table.transact(
            [Put({"pk": "J#1", "sk": "H"}), Put({"pk": "J#2", "sk": "H", OPEN_SK: Decimal(1)})]
        )
    assert table.items == {}


def test_a_query_answers_the_items_as_they_were_when_it_started() -> None:
    table = MemoryTable()
    table.transact([Put({"pk": "P", "sk": f"{n}", "v": 1}) for n in range(3)])
    found = table.query("P")
    assert next(found) == {"pk": "P", "sk": "0", "v": 1}
    table.transact([Update("P", "1", set={"v": 2})])
    assert [i["v"] for i in found] == [1, 1]


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


# -- size bookkeeping: an update adjusts the stored size by the attributes it touches ------

_VALUES: list[Any] = [
    "", "a", "é€😀", Decimal("-12.50"), Decimal("1E+30"), 7, 10**20, True, None, 1.5,
    b"\x00", {"x", "ü"}, [["a"], {"k": "v"}], {"m": {"n": [Decimal(1)]}},
]  # fmt: skip
_NAMES = ["n", "ñ", "tags", "gsi_open_pk", "gsi_open_sk", "m", "l", "v"]


def _random_update(rng: random.Random, sk: str) -> Update:
    def some() -> dict[str, Any]:
        return {rng.choice(_NAMES): rng.choice(_VALUES) for _ in range(rng.randrange(3))}

    adds: dict[str, Any] = {}
    for name in rng.sample(["count", "total", "seen"], rng.randrange(3)):
        adds[name] = {"s1", "s2"} if name == "seen" else Decimal(rng.randrange(-99, 99)) / 8
    return Update(
        "P", sk, add=adds, set=some(), set_if_absent=some(),
        remove=rng.sample([*_NAMES, "count", "total", "seen"], rng.randrange(3)),
    )  # fmt: skip


def test_a_stored_size_after_many_updates_is_the_items_size_counted_afresh() -> None:
    rng = random.Random(41)
    table = MemoryTable()
    for step in range(3000):
        sk = rng.choice(["1", "2", "3"])
        if rng.random() < 0.1:
            op: Put | Update = Put({"pk": "P", "sk": sk, rng.choice(_NAMES): rng.choice(_VALUES)})
        else:
            op = _random_update(rng, sk)
        with contextlib.suppress(ValueError):  # an index key that is not a string: refused
            table.transact([op])
        if ("P", sk) not in table.items:
            continue
        stored = table._sized[("P", sk)]
        assert stored.item is table.items[("P", sk)]
        assert stored.size == item_size(stored.item), step
        assert set(stored.mutable) == set(mutable_names(stored.item)), step
