"""The ``Table`` contract itself: conditions, transactions, updates, paging, sparse
indexes and the item size limit, the same on both versions."""

from __future__ import annotations

from decimal import Decimal

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
