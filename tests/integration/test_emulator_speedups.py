"""The emulator's UpdateItem, TransactWriteItems and Query fast paths give what moto
itself gives.

Random sequences of the ledger adapter's own updates (numbers added at DynamoDB's
precision, string sets, sets, if-absent sets, removals, every condition the ledger
uses) go through the fast path into one table and through moto's own path into
another; after every step both tables hold the same items and refused the same
updates. Queries on the table and on an index answer the same items in the same order
as moto's own Query. Random transactions of several Puts and Updates (conditions that
hold and that fail, all-or-nothing) leave the same items and the same refusals.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import boto3
import pytest
from moto import mock_aws

from costtracker import emulator_queries, emulator_transactions, emulator_updates
from shared.adapters.items import ItemTooLarge
from shared.adapters.ledger_schema import create_table_request
from shared.adapters.table import (
    Above,
    Absent,
    Below,
    ConditionFailed,
    DynamoTable,
    Put,
    Update,
    VersionIs,
)

NAMES = ("n1", "n2", "total", "version", "last_at", "first_at", "sources", "kind")


@pytest.fixture()
def tables() -> Iterator[tuple[Any, DynamoTable, DynamoTable]]:
    with mock_aws():
        emulator_updates.patch_moto_updates()
        emulator_queries.patch_moto_queries()
        emulator_transactions.patch_moto_transactions_fast()
        client = boto3.client("dynamodb", region_name="us-east-1")
        for name in ("fast", "moto"):
            client.create_table(**create_table_request(name))
        yield client, DynamoTable(client, "fast"), DynamoTable(client, "moto")


def _random_update(rng: random.Random, pk: str, sk: str) -> Update:
    names = rng.sample(NAMES, rng.randint(1, 5))
    op = Update(pk, sk)
    for name in names:
        kind = rng.choice(("add", "add", "set", "set_if_absent", "remove"))
        if name == "sources":
            if kind in ("set", "set_if_absent"):
                kind = "add"
            if kind == "add":
                sources = ("override", "snapshot", "price-list")
                op.add[name] = {rng.choice(sources) for _ in range(2)}
            else:
                op.remove = [*op.remove, name]
        elif kind == "add":
            digits = rng.choice((1, 6, 24, 30))
            value = Decimal(rng.randrange(-(10**digits), 10**digits)).scaleb(-rng.randint(0, 6))
            op.add[name] = value
        elif kind == "set":
            op.set[name] = rng.choice((Decimal(rng.randint(0, 9)), f"2026-11-0{rng.randint(1, 9)}"))
        elif kind == "set_if_absent":
            op.set_if_absent[name] = rng.choice(("rollup", Decimal(7)))
        else:
            op.remove = [*op.remove, name]
    conditions: list[Any] = []
    roll = rng.random()
    if roll < 0.15:
        conditions.append(Absent())
    elif roll < 0.3:
        conditions.append(VersionIs(rng.randint(0, 3)))
    if rng.random() < 0.4:
        conditions.append(Below("last_at", f"2026-11-0{rng.randint(1, 9)}"))
    if rng.random() < 0.3:
        conditions.append(Above("first_at", f"2026-11-0{rng.randint(1, 9)}"))
    op.conditions = conditions
    return op


def _outcome(table: DynamoTable, op: Update) -> str:
    try:
        table.transact([op])
    except ConditionFailed:
        return "condition failed"
    except Exception as exc:  # a refusal must be the same refusal on both paths
        return type(exc).__name__ + ":" + str(getattr(exc, "response", {}).get("Error", {}))
    return "ok"


def test_random_updates_leave_the_same_items(
    tables: tuple[Any, DynamoTable, DynamoTable], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, fast, moto = tables
    rng = random.Random(20261130)
    keys = [("JOB#a", "R#1"), ("JOB#a", "R#2"), ("JOB#b", "K#7")]
    outcomes: dict[str, int] = {}
    for _ in range(250):
        pk, sk = rng.choice(keys)
        op = _random_update(rng, pk, sk)
        got = _outcome(fast, op)
        with monkeypatch.context() as m:
            m.setattr(emulator_updates, "_actions", lambda *a: None)  # moto's own path
            expected = _outcome(moto, op)
        assert got == expected, op
        outcomes[got] = outcomes.get(got, 0) + 1
        assert fast.get(pk, sk) == moto.get(pk, sk), op
    # The sequence exercised both applied and refused updates.
    assert outcomes.get("ok", 0) > 40 and outcomes.get("condition failed", 0) > 20, outcomes


def test_the_fast_path_keeps_the_item_size_limit(
    tables: tuple[Any, DynamoTable, DynamoTable],
) -> None:
    client, fast, _ = tables
    fast.transact([Update("JOB#a", "R#1", set={"blob": "x" * 300_000})])
    with pytest.raises(ItemTooLarge) as refused:
        fast.transact([Update("JOB#a", "R#1", set={"blob2": "y" * 150_000})])
    cause = refused.value.__cause__
    assert isinstance(cause, client.exceptions.ClientError)
    assert "Item size to update has exceeded" in str(cause)
    assert "blob2" not in (fast.get("JOB#a", "R#1") or {})


def test_queries_answer_as_moto_does(
    tables: tuple[Any, DynamoTable, DynamoTable], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, fast, _ = tables
    rng = random.Random(7)
    for i in range(300):
        item: dict[str, Any] = {
            "pk": f"JOB#{rng.randint(0, 9)}",
            "sk": f"E#{rng.randint(0, 10**6):07d}",
        }
        if rng.random() < 0.4:
            item["gsi_open_pk"] = rng.choice(("OPEN", "OPEN", "ACCRUING"))
            item["gsi_open_sk"] = f"{rng.randint(0, 50):03d}#{i}"
        fast.transact([Put(item)])
    asks = [
        {"pk": "JOB#3"},
        {"pk": "JOB#4", "begins_with": "E#0"},
        {"pk": "JOB#5", "sk_from": "E#0200000", "sk_to": "E#0700000", "descending": True},
        {"pk": "JOB#6", "sk_from": "E#0500000"},
        {"pk": "JOB#7", "sk_to": "E#0600000", "limit": 3},
        {"pk": "JOB#8", "sk_from": "E#0100000", "attributes": ("sk",)},
        {"pk": "JOB#9", "sk_from": "E#0400000", "descending": True, "limit": 2},
        {"pk": "OPEN", "index": "open-index"},
        {"pk": "OPEN", "index": "open-index", "sk_from": "010", "descending": True, "limit": 7},
        {"pk": "ACCRUING", "index": "open-index"},
    ]
    for ask in asks:
        got = list(fast.query(**ask))
        with monkeypatch.context() as m:
            from moto.dynamodb.models.table import Table

            m.setattr(Table, "query", Table.query.__wrapped__)  # moto's own Query
            expected = list(fast.query(**ask))
        assert got == expected, ask
        assert got, ask


def _random_put(rng: random.Random, pk: str, sk: str) -> Put:
    item: dict[str, Any] = {"pk": pk, "sk": sk, "kind": rng.choice(("head", "segment"))}
    if rng.random() < 0.5:
        item["version"] = Decimal(rng.randint(0, 3))
    if rng.random() < 0.5:
        item["sources"] = {rng.choice(("override", "snapshot"))}
    conditions: list[Any] = []
    roll = rng.random()
    if roll < 0.3:
        conditions.append(Absent())
    elif roll < 0.4:
        conditions.append(VersionIs(rng.randint(0, 3)))
    if rng.random() < 0.2:
        conditions.append(Below("last_at", f"2026-11-0{rng.randint(1, 9)}"))
    return Put(item, conditions)


def _transact_outcome(table: DynamoTable, ops: list[Any]) -> str:
    try:
        table.transact(ops)
    except ConditionFailed as failed:
        return f"condition failed at {failed.key}"
    except Exception as exc:
        return type(exc).__name__ + ":" + str(getattr(exc, "response", {}).get("Error", {}))
    return "ok"


def test_random_transactions_leave_the_same_items(
    tables: tuple[Any, DynamoTable, DynamoTable], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, fast, moto = tables
    rng = random.Random(20261201)
    keys = [("JOB#a", "R#1"), ("JOB#a", "R#2"), ("JOB#b", "K#7"), ("JOB#b", "K#8")]
    taken = []
    holds = emulator_transactions.holds
    monkeypatch.setattr(emulator_transactions, "holds", lambda *a: taken.append(1) or holds(*a))
    outcomes: dict[str, int] = {}
    for _ in range(250):
        chosen = rng.sample(keys, rng.randint(2, 3))
        ops = [
            _random_put(rng, pk, sk) if rng.random() < 0.35 else _random_update(rng, pk, sk)
            for pk, sk in chosen
        ]
        for op in ops:
            if rng.random() < 0.6:
                op.conditions = []  # most entries of a ledger transaction are unconditional
        got = _transact_outcome(fast, ops)
        with monkeypatch.context() as m:
            m.setattr(emulator_transactions, "ENABLED", False)  # moto's own path
            m.setattr(emulator_updates, "_actions", lambda *a: None)
            expected = _transact_outcome(moto, ops)
        assert got == expected, ops
        outcomes[got.split(" at ")[0]] = outcomes.get(got.split(" at ")[0], 0) + 1
        for pk, sk in keys:
            assert fast.get(pk, sk) == moto.get(pk, sk), ops
    assert outcomes.get("ok", 0) > 40 and outcomes.get("condition failed", 0) > 40, outcomes
    assert len(taken) > 400  # the fast path answered (conditions checked per entry)


def test_a_transaction_over_the_size_limit_writes_nothing(
    tables: tuple[Any, DynamoTable, DynamoTable],
) -> None:
    _, fast, _ = tables
    fast.transact([Update("JOB#a", "R#1", set={"blob": "x" * 300_000})])
    with pytest.raises(ItemTooLarge):
        fast.transact(
            [
                Update("JOB#a", "R#2", set={"n1": Decimal(1)}),
                Update("JOB#a", "R#1", set={"blob2": "y" * 150_000}),
            ]
        )
    assert fast.get("JOB#a", "R#2") is None
    assert "blob2" not in (fast.get("JOB#a", "R#1") or {})


@pytest.mark.parametrize("name", ["spot_checkpoints.json", "idle_alarms.json", "two_accounts.json"])
def test_json_wire_matches_moto_on_every_call_of_a_replay(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every DynamoDB request and answer of a whole replay, read and written both ways,
    and the replay's output still its golden file."""
    from costtracker import emulator_wire
    from tests.golden.make_golden import ROOT, outputs

    monkeypatch.setattr(emulator_wire, "VERIFY", True)
    monkeypatch.setattr(emulator_wire, "MISMATCHES", [])
    before = dict(emulator_wire.ANSWERED)
    as_json, _ = outputs(name)
    assert emulator_wire.MISMATCHES == []
    assert as_json == (ROOT / name.replace(".json", ".replay.json")).read_text()
    print(name, {k: emulator_wire.ANSWERED[k] - before[k] for k in before})
    assert emulator_wire.ANSWERED["requests"] - before["requests"] > 20
    assert emulator_wire.ANSWERED["answers"] - before["answers"] > 20
