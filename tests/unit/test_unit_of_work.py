"""One event's unit of work: the stores that staged its operations keep what was written,
or forget what a refused write was built from, without the caller naming either."""

from __future__ import annotations

import pytest

from shared.adapters import keys
from shared.adapters.ledger_schema import ROLLUPS_INDEX
from shared.adapters.managed_store import TrainingStore
from shared.adapters.rollup_store import IDENTITY_NAMES, RollupChange, RollupStore
from shared.adapters.table import Absent, ConditionFailed, MemoryTable, Put
from shared.adapters.unit_of_work import UnitOfWork
from tests.contract.records import training_head


def test_hooks_follow_the_outcome_kept_after_a_write_forgotten_after_a_refusal() -> None:
    table = MemoryTable()
    said: list[str] = []
    uow = UnitOfWork(table)
    uow.add(
        Put({"pk": "a", "sk": "1"}, [Absent()]),
        on_commit=lambda: said.append("keep a"),
        on_conflict=lambda: said.append("forget a"),
    )
    uow.add(None, on_commit=lambda: said.append("keep b"), on_conflict=lambda: said.append("b"))
    uow.commit()
    assert said == ["keep a", "keep b"]
    said.clear()
    again = UnitOfWork(table)
    again.add(Put({"pk": "c", "sk": "1"}), on_commit=lambda: said.append("keep c"))
    again.add(
        Put({"pk": "a", "sk": "1"}, [Absent()]),  # written already: refused
        on_commit=lambda: said.append("keep a"),
        on_conflict=lambda: said.append("forget a"),
    )
    again.add(None, on_conflict=lambda: said.append("forget b"))  # read, nothing to write
    with pytest.raises(ConditionFailed):
        again.commit()
    assert said == ["forget a", "forget b"]
    assert table.get("c", "1") is None  # nothing of the refused transaction landed


def test_a_store_keeps_what_it_wrote_and_forgets_a_copy_another_writer_moved_on() -> None:
    table = MemoryTable()
    ours, theirs = TrainingStore(table), TrainingStore(table)  # two containers, one table
    head = training_head(None)
    key = (head.job_id, head.account, head.name)
    uow = UnitOfWork(table)
    ours.stage(uow, head, None)
    uow.commit()
    reads = table.calls.get("get", 0)
    kept = ours.head(*key)
    assert kept is not None and kept.version == 1
    assert table.calls.get("get", 0) == reads  # kept as written: no read
    moved = UnitOfWork(table)
    theirs.stage(moved, head.model_copy(update={"status": "Completed"}), 1)
    moved.commit()
    stale = UnitOfWork(table)
    ours.stage(stale, kept.model_copy(update={"status": "Stopping"}), kept.version)
    with pytest.raises(ConditionFailed):
        stale.commit()
    fresh = ours.head(*key)  # forgotten: read afresh
    assert fresh is not None and (fresh.version, fresh.status) == (2, "Completed")
    assert table.calls["get"] == reads + 1


def test_a_rollup_read_for_a_change_that_writes_nothing_is_forgotten_on_a_conflict() -> None:
    table = MemoryTable()
    rollups, training = RollupStore(table), TrainingStore(table)
    change = RollupChange("llama", "123456789012", add_strings={"training_jobs": {"a"}})
    uow = UnitOfWork(table)
    rollups.stage(uow, change)
    uow.commit()
    head = training_head(None)
    uow = UnitOfWork(table)
    training.stage(uow, head, None)
    uow.commit()
    refused = UnitOfWork(table)
    TrainingStore(table).stage(refused, head, None)  # a second first write: refused
    assert rollups.stage(refused, change) is None  # nothing new for the rollup
    reads = table.calls.get("get", 0)
    with pytest.raises(ConditionFailed):
        refused.commit()
    assert rollups.stage(UnitOfWork(table), change) is None
    assert table.calls["get"] == reads + 1  # the rollup was read again


def test_a_rollup_names_itself_until_it_holds_its_whole_identity() -> None:
    table = MemoryTable()
    rollups = RollupStore(table)
    change = RollupChange("llama", "123456789012", counters={"checkpoints": 1})
    first = rollups.stage(UnitOfWork(table), change)
    assert first is not None
    assert set(first.set_if_absent) == IDENTITY_NAMES  # a new rollup: all of it
    uow = UnitOfWork(table)
    rollups.stage(uow, change)
    uow.commit()
    again = rollups.stage(UnitOfWork(table), change)
    assert again is not None and again.set_if_absent == {}  # held already: not sent again
    # A rollup that lacks part of it (written before it was indexed) is sent that part.
    item = table.get(again.pk, again.sk)
    assert item is not None
    sort = ROLLUPS_INDEX.sort_key
    table.transact([Put({k: v for k, v in item.items() if k != sort})])
    partial = RollupStore(table).stage(UnitOfWork(table), change)
    assert partial is not None and partial.set_if_absent == {sort: first.set_if_absent[sort]}


def test_a_rollup_kept_as_written_holds_every_string_added_and_shares_none_with_the_op() -> None:
    table = MemoryTable()
    rollups = RollupStore(table)
    for sources in ({"a"}, {"b"}, {"a", "c"}):
        uow = UnitOfWork(table)
        op = rollups.stage(uow, RollupChange("llama", "123456789012", add_strings={"p": sources}))
        uow.commit()
        assert op is not None
        op.add["p"].add("not written")  # the op's set is not the kept copy's
    everything = RollupChange("llama", "123456789012", add_strings={"p": {"a", "b", "c"}})
    assert rollups.stage(UnitOfWork(table), everything) is None  # all kept: nothing new
    stored = table.get(keys.job_pk("llama"), keys.rollup_sk("123456789012"))
    assert stored is not None and stored["p"] == {"a", "b", "c"}
