"""The ``Table`` contract itself: conditions, transactions, updates, paging, sparse
indexes and the item size limit, the same on both versions."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from shared.adapters import ledger_schema as schema
from shared.adapters.items import ItemTooLarge, item_size
from shared.adapters.table import (
    Above,
    Absent,
    Below,
    ConditionFailed,
    MemoryTable,
    Put,
    Table,
    Update,
    VersionIs,
)


def test_a_put_repeated_leaves_one_item_and_a_put_if_absent_refuses_the_second(
    table: Table,
) -> None:
    item = {"pk": "P", "sk": "S", "kind": "x", "n": Decimal(3), "tags": {"a", "b"}}
    table.transact([Put(item)])
    table.transact([Put(item)])
    assert list(table.query("P")) == [item]
    with pytest.raises(ConditionFailed) as failed:
        table.transact([Put({**item, "n": Decimal(4)}, [Absent()])])
    assert failed.value.key == ("P", "S")
    assert table.get("P", "S") == item


def test_a_failed_condition_writes_nothing_of_the_transaction(table: Table) -> None:
    table.transact([Put({"pk": "P", "sk": "B", "version": 1})])
    with pytest.raises(ConditionFailed) as failed:
        table.transact(
            [
                Put({"pk": "P", "sk": "A", "v": "new"}, [Absent()]),
                Put({"pk": "P", "sk": "B", "version": 2}, [VersionIs(7)]),
            ]
        )
    assert failed.value.key == ("P", "B")
    assert table.get("P", "A") is None
    assert table.get("P", "B") == {"pk": "P", "sk": "B", "version": 1}


def test_versions_guard_updates(table: Table) -> None:
    table.transact([Put({"pk": "P", "sk": "H", "version": 1, "r": "one"}, [Absent()])])
    table.transact([Put({"pk": "P", "sk": "H", "version": 2, "r": "two"}, [VersionIs(1)])])
    with pytest.raises(ConditionFailed):  # a writer holding version 1 lost the race
        table.transact([Put({"pk": "P", "sk": "H", "version": 2, "r": "stale"}, [VersionIs(1)])])
    assert table.get("P", "H") == {"pk": "P", "sk": "H", "version": 2, "r": "two"}


def test_updates_add_set_if_absent_remove_and_move_one_way(table: Table) -> None:
    table.transact(
        [
            Update(
                "P",
                "R",
                add={"n": Decimal("1.5"), "s": {"x"}},
                set={"first": "2026-11-02"},
                set_if_absent={"kind": "rollup", "gone": "soon"},
            )
        ]
    )
    table.transact(
        [
            Update(
                "P",
                "R",
                add={"n": Decimal("2"), "s": {"y", "x"}},
                set={"first": "2026-11-01"},
                set_if_absent={"kind": "other"},
                remove=("gone",),
                conditions=[Above("first", "2026-11-01")],
            )
        ]
    )
    with pytest.raises(ConditionFailed):  # "lower to at most": not lower
        table.transact(
            [
                Update(
                    "P", "R", set={"first": "2026-11-05"}, conditions=[Above("first", "2026-11-05")]
                )
            ]
        )
    with pytest.raises(ConditionFailed):  # "raise to at least": not higher
        table.transact(
            [Update("P", "R", set={"n": Decimal(1)}, conditions=[Below("n", Decimal(1))])]
        )
    assert table.get("P", "R") == {
        "pk": "P",
        "sk": "R",
        "kind": "rollup",
        "n": Decimal("3.5"),
        "s": {"x", "y"},
        "first": "2026-11-01",
    }


def test_queries_by_prefix_range_order_and_limit(table: Table) -> None:
    sks = ["A#1", "E#2026-11-01", "E#2026-11-02", "E#2026-11-03", "H#I#x", "R#1"]
    table.transact([Put({"pk": "J", "sk": sk}) for sk in sks])
    table.transact([Put({"pk": "K", "sk": "E#2026-11-02"})])

    def sk_of(**kwargs: object) -> list[str]:
        return [str(i["sk"]) for i in table.query("J", **kwargs)]  # type: ignore[arg-type]

    assert sk_of() == sks
    assert sk_of(begins_with="E#") == sks[1:4]
    assert sk_of(sk_from="E#2026-11-02", sk_to="E#~") == sks[2:4]
    assert sk_of(sk_from="H#") == sks[4:]
    assert sk_of(sk_to="E#2026-11-01") == sks[:2]
    assert sk_of(descending=True, limit=2) == ["R#1", "H#I#x"]
    assert sk_of(begins_with="E#", limit=2) == sks[1:3]


def test_a_query_over_more_than_one_page_returns_every_item_in_order(table: Table) -> None:
    """DynamoDB returns at most 1 MB a page: 30 items of 50 KB are two pages or more."""
    blob = "x" * 50_000
    for n in range(30):
        table.transact([Put({"pk": "BIG", "sk": f"{n:03d}", "blob": blob})])
    found = [str(i["sk"]) for i in table.query("BIG")]
    assert found == [f"{n:03d}" for n in range(30)]
    assert [str(i["sk"]) for i in table.query("BIG", descending=True, limit=25)] == [
        f"{n:03d}" for n in range(29, 4, -1)
    ]


def test_batch_get_returns_every_present_key_beyond_100(table: Table) -> None:
    for n in range(0, 150, 10):
        table.transact(
            [Put({"pk": f"D#{n:03d}", "sk": "D", "n": Decimal(n)}) for n in range(n, n + 10)]
        )
    keys = [(f"D#{n:03d}", "D") for n in range(0, 160)]  # 10 of them absent
    found = sorted(int(i["n"]) for i in table.batch_get(keys))
    assert found == list(range(150))


def test_sparse_indexes_hold_items_with_both_key_attributes_only(table: Table) -> None:
    open_pk, open_sk = schema.index_attributes(schema.OPEN_INDEX)
    table.transact(
        [
            Put({"pk": "J#1", "sk": "H#I#b", open_pk: "OPEN", open_sk: "acct#b"}),
            Put({"pk": "J#2", "sk": "H#I#a", open_pk: "OPEN", open_sk: "acct#a"}),
            Put({"pk": "J#3", "sk": "H#I#c", open_pk: "ACCRUING", open_sk: "acct#c"}),
            Put({"pk": "J#4", "sk": "H#I#d"}),  # in no index
            Put({"pk": "J#5", "sk": "H#I#e", open_pk: "OPEN"}),  # no sort key: in none
        ]
    )
    name = schema.OPEN_INDEX.name
    assert [i["sk"] for i in table.query("OPEN", index=name)] == ["H#I#a", "H#I#b"]
    assert [i["sk"] for i in table.query("ACCRUING", index=name)] == ["H#I#c"]
    # Removing the index attributes takes the item out of the index.
    table.transact([Update("J#1", "H#I#b", remove=(open_pk, open_sk))])
    assert [i["sk"] for i in table.query("OPEN", index=name)] == ["H#I#a"]
    assert [i["sk"] for i in table.query("OPEN", index=name, descending=True, limit=1)] == ["H#I#a"]


def test_a_query_can_return_only_some_attributes(table: Table) -> None:
    """What the sweeps list: keys and versions of the open heads, not the heads."""
    open_pk, open_sk = schema.index_attributes(schema.OPEN_INDEX)
    table.transact(
        [
            Put({"pk": "J#1", "sk": "H#I#a", "version": 3, "record": "x" * 500,
                 open_pk: "OPEN", open_sk: "acct#a"}),
        ]
    )  # fmt: skip
    found = list(table.query("OPEN", index=schema.OPEN_INDEX.name, attributes=("sk", "version")))
    assert found == [{"sk": "H#I#a", "version": 3}]
    assert list(table.query("J#1", attributes=("record",))) == [{"record": "x" * 500}]
    table.transact([Put({"pk": "J#2", "sk": "R#a", "sources": {"snapshot"}})])
    (projected,) = table.query("J#2", attributes=("sources",))
    projected["sources"].add("override")  # a caller's change stays the caller's
    assert list(table.query("J#2", attributes=("sources",))) == [{"sources": {"snapshot"}}]


def test_a_query_can_skip_items_whose_attribute_is_below_a_value(table: Table) -> None:
    """What a day's readers skip: checkpoint heads whose storage ended before the day.
    Items without the attribute are kept; ``limit`` counts the items kept."""
    ends = ["2026-11-01T23:59:59Z", "", "2026-11-02T00:00:00Z", "2026-11-01T08:00:00Z",
            "2026-11-03T10:00:00Z"]  # fmt: skip
    table.transact(
        [
            Put({"pk": "J#1", "sk": f"H#{n}"} | ({"until": u} if u else {}))
            for n, u in enumerate(ends)
        ]
    )
    kept = [i["sk"] for i in table.query("J#1", keep_from=("until", "2026-11-02T00:00:00Z"))]
    assert kept == ["H#1", "H#2", "H#4"]
    first = table.query("J#1", keep_from=("until", "2026-11-02T00:00:00Z"), limit=2)
    assert [i["sk"] for i in first] == ["H#1", "H#2"]
    backwards = table.query("J#1", keep_from=("until", "2026-11-02"), descending=True, limit=1)
    assert [i["sk"] for i in backwards] == ["H#4"]
    assert len(list(table.query("J#1"))) == 5


def test_an_item_over_the_size_limit_is_refused_and_one_under_it_kept(table: Table) -> None:
    under = {"pk": "S", "sk": "under", "blob": "x" * 380_000}
    over = {"pk": "S", "sk": "over", "blob": "x" * 420_000}
    table.transact([Put(under)])
    with pytest.raises(ItemTooLarge):
        table.transact([Put(over)])
    with pytest.raises(ItemTooLarge):
        table.transact([Update("S", "under", set={"more": "y" * 40_000})])
    assert table.get("S", "over") is None
    assert table.get("S", "under") == under
    assert item_size(under) < 390_000


def test_the_in_memory_indexes_are_the_tables_gsis() -> None:
    """The twin's indexes come from the definitions the table is created from."""
    request = schema.create_table_request("t")
    gsis = {
        g["IndexName"]: tuple(k["AttributeName"] for k in g["KeySchema"])  # type: ignore[index]
        for g in request["GlobalSecondaryIndexes"]  # type: ignore[attr-defined]
    }
    assert MemoryTable().indexes == gsis
    assert set(gsis) == {"open-index", "unpriced-index", "rollups-index", "pending-index"}


# -- every operation and expression the stores use, on both tables (issue 29: local mode
# keeps the ledger on the in-memory table, so the twin must answer as DynamoDB does).


def test_an_item_moves_between_index_partitions_as_its_index_key_changes(table: Table) -> None:
    open_pk, open_sk = schema.index_attributes(schema.OPEN_INDEX)
    name = schema.OPEN_INDEX.name
    table.transact([Put({"pk": "J#1", "sk": "H#I#a", open_pk: "OPEN", open_sk: "acct#a"})])
    table.transact([Update("J#1", "H#I#a", set={open_pk: "ACCRUING"})])
    assert list(table.query("OPEN", index=name)) == []
    assert [i["sk"] for i in table.query("ACCRUING", index=name)] == ["H#I#a"]
    table.transact([Update("J#1", "H#I#a", set={open_sk: "acct#z"})])  # its index sort key
    assert [i[open_sk] for i in table.query("ACCRUING", index=name)] == ["acct#z"]
    table.transact([Put({"pk": "J#1", "sk": "H#I#a", "version": 2})])  # replaced: in no index
    assert list(table.query("ACCRUING", index=name)) == []
    assert table.get("J#1", "H#I#a") == {"pk": "J#1", "sk": "H#I#a", "version": 2}


def test_index_queries_take_the_same_sort_key_conditions(table: Table) -> None:
    pending_pk, pending_sk = schema.index_attributes(schema.PENDING_INDEX)
    name = schema.PENDING_INDEX.name
    due = ["2026-11-01T10:00:00Z", "2026-11-01T11:00:00Z", "2026-11-02T09:00:00Z"]
    table.transact(
        [
            Put({"pk": f"J#{n}", "sk": "O#x", pending_pk: "PENDING", pending_sk: at})
            for n, at in enumerate(due)
        ]
    )

    def due_of(**kwargs: object) -> list[str]:
        return [str(i[pending_sk]) for i in table.query("PENDING", index=name, **kwargs)]  # type: ignore[arg-type]

    assert due_of() == due
    assert due_of(begins_with="2026-11-01") == due[:2]
    assert due_of(sk_to="2026-11-01T11:00:00Z") == due[:2]
    assert due_of(sk_from="2026-11-01T11:00:00Z") == due[1:]
    assert due_of(sk_from="2026-11-01T10:30:00Z", sk_to="2026-11-02T00:00:00Z") == due[1:2]
    assert due_of(descending=True, limit=1) == due[2:]
    assert list(table.query("NOTHING", index=name)) == []
    assert list(table.query("NO#SUCH#PK")) == []


def test_conditions_on_an_absent_item_or_attribute(table: Table) -> None:
    # Raise-to / lower-to hold when the item or the attribute is absent.
    table.transact([Update("C", "1", set={"n": Decimal(5)}, conditions=[Below("n", Decimal(9))])])
    table.transact([Update("C", "2", set={"t": "b"}, conditions=[Above("t", "c")])])
    table.transact([Update("C", "1", set={"t": "a"}, conditions=[Above("t", "a")])])
    with pytest.raises(ConditionFailed):  # a version of an item that is not there
        table.transact([Update("C", "3", set={"x": "y"}, conditions=[VersionIs(1)])])
    with pytest.raises(ConditionFailed):  # an update that must create the item
        table.transact([Update("C", "1", set={"x": "y"}, conditions=[Absent()])])
    table.transact([Update("C", "4", set={"x": "y"}, conditions=[Absent()])])
    assert table.get("C", "1") == {"pk": "C", "sk": "1", "n": Decimal(5), "t": "a"}
    assert table.get("C", "2") == {"pk": "C", "sk": "2", "t": "b"}
    assert table.get("C", "3") is None
    assert table.get("C", "4") == {"pk": "C", "sk": "4", "x": "y"}


def test_an_update_of_an_absent_item_creates_it_from_zero_and_empty(table: Table) -> None:
    table.transact(
        [
            Update(
                "U",
                "1",
                add={"n": Decimal("2.25"), "tags": {"a"}},
                set_if_absent={"first": "2026-11-01", "version": 1},
                set={"m": {"k": "v", "d": Decimal("1.5")}},
            )
        ]
    )
    assert table.get("U", "1") == {
        "pk": "U",
        "sk": "1",
        "n": Decimal("2.25"),
        "tags": {"a"},
        "first": "2026-11-01",
        "version": 1,
        "m": {"k": "v", "d": Decimal("1.5")},
    }
    got = table.get("U", "1")
    assert got is not None
    got["m"]["k"] = "changed"  # a reader's copy, not the stored item
    got["tags"].add("b")
    assert table.get("U", "1") == {**got, "m": {"k": "v", "d": Decimal("1.5")}, "tags": {"a"}}


def test_lists_and_nested_maps_a_writer_or_reader_holds_are_its_own(table: Table) -> None:
    item: dict[str, Any] = {"pk": "U", "sk": "2", "dims": [["i", "1"]], "m": {"in": {"k": "v"}}}
    table.transact([Put(item)])
    item["dims"][0].append("changed")  # the writer's item, not the stored one
    stored = {"pk": "U", "sk": "2", "dims": [["i", "1"]], "m": {"in": {"k": "v"}}}
    for read in (table.get("U", "2"), next(iter(table.query("U", attributes=("dims", "m"))))):
        assert read is not None
        read["dims"][0].append("changed")
        read["m"]["in"]["k"] = "changed"
    assert table.get("U", "2") == stored


def test_a_transaction_touching_an_item_twice_is_refused_and_writes_nothing(
    table: Table,
) -> None:
    with pytest.raises(ValueError):
        table.transact([Put({"pk": "T", "sk": "1"}), Update("T", "1", set={"x": "y"})])
    assert table.get("T", "1") is None


def test_a_failed_transaction_leaves_items_and_indexes_as_they_were(table: Table) -> None:
    open_pk, open_sk = schema.index_attributes(schema.OPEN_INDEX)
    name = schema.OPEN_INDEX.name
    table.transact([Put({"pk": "F", "sk": "1", "version": 1, open_pk: "OPEN", open_sk: "a"})])
    with pytest.raises(ConditionFailed):
        table.transact(
            [
                Update("F", "1", set={"version": 2}, remove=(open_pk,), conditions=[VersionIs(1)]),
                Put({"pk": "F", "sk": "2", open_pk: "OPEN", open_sk: "b"}),
                Update("F", "3", set={"x": "y"}, conditions=[VersionIs(7)]),
            ]
        )
    assert [i["sk"] for i in table.query("OPEN", index=name)] == ["1"]
    assert table.get("F", "2") is None
    assert table.batch_get([]) == []


def test_a_projected_filtered_index_query_counts_kept_items_only(table: Table) -> None:
    rollups_pk, rollups_sk = schema.index_attributes(schema.ROLLUPS_INDEX)
    name = schema.ROLLUPS_INDEX.name
    lasts = ["2026-11-01", "", "2026-11-03", "2026-11-04"]
    table.transact(
        [
            Put(
                {"pk": f"J#{n}", "sk": "R", rollups_pk: "ROLLUP", rollups_sk: f"J#{n}",
                 "blob": "x" * 100} | ({"last": last} if last else {})
            )
            for n, last in enumerate(lasts)
        ]
    )  # fmt: skip
    found = list(
        table.query(
            "ROLLUP",
            index=name,
            attributes=("pk", "last"),
            keep_from=("last", "2026-11-03"),
            limit=2,
        )
    )
    assert found == [{"pk": "J#1"}, {"pk": "J#2", "last": "2026-11-03"}]
