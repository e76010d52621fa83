"""A job's grouping tags: each key from the earliest-running record that carries it,
ties by the record's id (``shared.domain.job.rollup_tags`` and the rollup store)."""

from __future__ import annotations

from shared.adapters.rollup_store import RollupChange, RollupStore
from shared.adapters.table import MemoryTable
from shared.adapters.unit_of_work import UnitOfWork
from shared.domain.job import rollup_tags


def write(store: RollupStore, table: MemoryTable, account: str, since: str, **tags: str) -> None:
    uow = UnitOfWork(table)
    store.stage(uow, RollupChange(job_id="job", account=account, tags=tags, tags_from=since))
    uow.commit()


def test_a_record_without_a_key_has_no_say_in_it() -> None:
    """A data-prep node (team only) ran at 00:00, the Trainium node (team, cost center)
    at 00:04: the job keeps both keys, each from the earliest record carrying it."""
    table = MemoryTable()
    store = RollupStore(table)
    write(
        store,
        table,
        "1",
        "2026-11-01T00:04:00+00:00#i-trn",
        team="nlp",
        **{"cost-center": "cc-101"},
    )
    write(store, table, "1", "2026-11-01T00:00:00+00:00#i-cpu", team="data")
    tags, conflicts = rollup_tags(store.of_job("job"))
    assert tags == {"cost-center": "cc-101", "team": "data"}
    assert conflicts == {}  # conflicts come from the values each record reported (tag_values)


def test_ties_in_the_same_second_go_to_the_lower_instance_id_in_any_account() -> None:
    table = MemoryTable()
    store = RollupStore(table)
    write(store, table, "111111111111", "2026-11-01T03:00:00+00:00#i-0b2", team="alpha")
    write(store, table, "222222222222", "2026-11-01T03:00:00+00:00#i-0b1", team="beta")
    assert rollup_tags(store.of_job("job"))[0] == {"team": "beta"}


def test_a_later_record_never_replaces_a_key_and_repeats_change_nothing() -> None:
    table = MemoryTable()
    store = RollupStore(table)
    write(store, table, "1", "2026-11-01T00:00:00+00:00#i-a", project="llama")
    write(store, table, "1", "2026-11-01T05:00:00+00:00#i-b", project="other")
    before = dict(table.items)
    # The same record again, and a fresh store that has not seen the item: no write.
    write(store, table, "1", "2026-11-01T00:00:00+00:00#i-a", project="llama")
    write(RollupStore(table), table, "1", "2026-11-01T05:00:00+00:00#i-b", project="other")
    assert table.items == before
    assert rollup_tags(store.of_job("job"))[0] == {"project": "llama"}


def test_a_rollup_written_before_keys_were_kept_apart_still_reads() -> None:
    legacy = {"tags": {"team": "nlp", "project": "llama"}, "tags_from": "2026-11-01T00:00"}
    newer = {"tag:team": "vision", "tag_from:team": "2026-11-01T01:00#i-x"}
    assert rollup_tags([legacy, newer])[0] == {"project": "llama", "team": "nlp"}
