"""Every store over both tables: what it writes, what it reads back, its conditions,
its index entries and its TTL attributes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from shared.adapters import keys
from shared.adapters import ledger_schema as schema
from shared.adapters.budget_store import BudgetStore
from shared.adapters.checkpoint_store import CheckpointStore
from shared.adapters.daily_store import ReconciliationStore, SummaryStore
from shared.adapters.instance_store import InstanceStore, Pointer
from shared.adapters.managed_store import ReservationStore, TrainingStore
from shared.adapters.notify import Alert
from shared.adapters.outbox import OutboxStore
from shared.adapters.price_cache_store import PriceCacheStore
from shared.adapters.rollup_store import RollupChange, RollupStore
from shared.adapters.table import ConditionFailed, Table
from shared.adapters.unit_of_work import UnitOfWork
from shared.config.budgets import Budget
from shared.domain.base import Rate, RateSource
from tests.contract.conftest import ACCOUNT, T0
from tests.contract.records import reservation_head, training_head

NOW = datetime(2026, 11, 3, 12, tzinfo=UTC)


def written(table: Table, *stages: Callable[[UnitOfWork], Any]) -> None:
    """Stage into one unit of work and commit it (as a service does)."""
    uow = UnitOfWork(table)
    for stage in stages:
        stage(uow)
    uow.commit()


def _budget(budget_id: str, amount: str) -> Budget:
    return Budget.model_validate(
        {
            "budget_id": budget_id,
            "amount_usd": amount,
            "period": "month",
            "scope": {"account": True},
        }
    )


def test_budgets_deletions_and_history(table: Table) -> None:
    store = BudgetStore(table)
    assert store.stored_budgets() == {}
    store.put_budget(_budget("b1", "100"))
    store.put_budget(_budget("b1", "100"))  # repeated: the same one budget
    store.delete_budget("b2")  # deleted through the API: wins over the configured one
    assert store.stored_budgets() == {"b1": _budget("b1", "100"), "b2": None}
    at = NOW.isoformat()
    store.put_budget_change("b1", _budget("b1", "200"), {"at": at, "action": "update", "n": 1})
    store.put_budget_change("b1", None, {"at": at, "action": "delete", "n": 2})  # same instant
    store.put_budget_change("b3", _budget("b3", "5"), {"at": at, "action": "create", "n": 3})
    assert store.stored_budgets() == {"b1": None, "b2": None, "b3": _budget("b3", "5")}
    assert [c["n"] for c in store.budget_history("b1")] == [1, 2]
    assert store.budget_history("b3") == [{"at": at, "action": "create", "n": 3}]
    assert store.budget_history("none") == []


def test_the_apis_recipient_subscriptions_are_recorded_and_forgotten(table: Table) -> None:
    store = BudgetStore(table)
    assert store.api_subscriptions() == {}
    store.record_api_subscription("Lead@Example.com", "subscribing")
    store.record_api_subscription("lead@example.com", "arn:aws:sns:us-east-1:1:finance:a")
    store.record_api_subscription("cfo@example.com", "arn:aws:sns:us-east-1:1:finance:b")
    assert store.api_subscriptions() == {
        "lead@example.com": "arn:aws:sns:us-east-1:1:finance:a",
        "cfo@example.com": "arn:aws:sns:us-east-1:1:finance:b",
    }
    store.clear_api_subscription("lead@example.com")
    assert store.api_subscriptions() == {"cfo@example.com": "arn:aws:sns:us-east-1:1:finance:b"}
    assert store.stored_budgets() == {}  # a partition of its own, never read as a budget


def test_the_price_cache_round_trips_a_rate_with_its_provenance(table: Table) -> None:
    store = PriceCacheStore(table)
    rate = Rate(
        list_usd=Decimal("55.04"),
        effective_usd=Decimal("41.28"),
        source=RateSource.PRICE_API,
        checked_on=date(2026, 11, 1),
        region="us-east-1",
    )
    assert store.get_price("ec2#us-east-1#p5.48xlarge#Linux") is None
    store.put_price("ec2#us-east-1#p5.48xlarge#Linux", rate)
    store.put_price("ec2#us-east-1#p5.48xlarge#Linux", rate)
    assert store.get_price("ec2#us-east-1#p5.48xlarge#Linux") == rate
    assert store.get_price("ec2#eu-west-1#p5.48xlarge#Linux") is None


def test_daily_documents_by_date_beyond_one_batch(table: Table) -> None:
    summaries, reconciliations = SummaryStore(table), ReconciliationStore(table)
    days = [date(2026, 1, 1) + timedelta(days=n) for n in range(120)]
    for n, day in enumerate(days):
        if n % 3:
            summaries.put_summary(day, {"date": day.isoformat(), "total_usd": str(n)})
    reconciliations.put_reconciliation(days[0], {"final": True, "n": 1})
    reconciliations.put_reconciliation(days[0], {"final": True, "n": 2})  # replaced whole
    found = summaries.get_summaries(days)
    assert sorted(found) == [d for n, d in enumerate(days) if n % 3]
    assert found[days[4]] == {"date": "2026-01-05", "total_usd": "4"}
    assert reconciliations.get_reconciliations(days) == {days[0]: {"final": True, "n": 2}}
    assert summaries.get_summaries([days[0]]) == {}  # the kinds do not mix


def test_a_large_day_document_is_stored_in_bounded_parts_and_read_whole(table: Table) -> None:
    """A day of 10,000 jobs: a document of several parts, none over the part size; a
    shorter re-write is read alone (the head's count says which parts are current)."""
    from shared.domain.limits import DOCUMENT_PART_BYTES

    summaries = SummaryStore(table)
    day, other = date(2026, 11, 1), date(2026, 11, 2)
    big = {"date": day.isoformat(), "by_job": {f"sweep-{n:05d}": "21.50" for n in range(10_000)}}
    summaries.put_summary(day, big)
    summaries.put_summary(other, {"date": other.isoformat(), "total_usd": "1"})
    parts = list(table.query("SUMMARY#2026-11-01"))
    assert len(parts) > 3
    assert all(len(str(p["document"])) <= DOCUMENT_PART_BYTES for p in parts)
    assert summaries.get_summaries([day, other]) == {
        day: big,
        other: {"date": other.isoformat(), "total_usd": "1"},
    }
    summaries.put_summary(day, {"date": day.isoformat(), "total_usd": "2"})
    assert summaries.get_summaries([day]) == {day: {"date": day.isoformat(), "total_usd": "2"}}


def test_an_alert_is_recorded_once_and_leaves_the_pending_index_when_sent(table: Table) -> None:
    store = OutboxStore(table)
    first = Alert("finance", "budget", "s", "m", alert_id="a1")
    second = Alert("team", "idle", "s", "m", alert_id="a2")
    assert store.record(second, NOW + timedelta(seconds=1)) is True
    assert store.record(first, NOW) is True
    assert store.record(first, NOW) is False
    assert [i["sk"] for i in store.pending()] == ["a1", "a2"]  # oldest first
    store.note_failure("a1", "throttled", NOW + timedelta(minutes=1), 0)
    store.mark_sent("a1", NOW)
    assert [i["sk"] for i in store.pending()] == ["a2"]
    sent = store.get("a1")
    assert sent is not None and sent["state"] == "sent" and sent["attempts"] == 1
    assert not set(schema.index_attributes(schema.PENDING_INDEX)) & set(sent)


def test_pointers_are_written_once_with_their_ttl(table: Table) -> None:
    store = InstanceStore(table)
    tracked = Pointer(ACCOUNT, "i-1", "llama")
    written(table, lambda uow: store.stage_pointer(uow, tracked))
    with pytest.raises(ConditionFailed):
        written(table, lambda uow: store.stage_pointer(uow, Pointer(ACCOUNT, "i-1", "other")))
    untracked = Pointer(ACCOUNT, "i-2", None)
    written(table, lambda uow: store.stage_pointer(uow, untracked, expires_at=1_900_000_000))
    fresh = InstanceStore(table)
    assert fresh.pointer(ACCOUNT, "i-1") == tracked
    assert fresh.pointer(ACCOUNT, "i-2") == untracked
    assert fresh.pointer(ACCOUNT, "i-3") is None
    item = table.get(*keys.pointer(ACCOUNT, "i-2"))
    assert item is not None and item[schema.TTL_ATTRIBUTE] == 1_900_000_000


def test_rollups_accumulate_and_are_listed_by_the_rollups_index(table: Table) -> None:
    store = RollupStore(table)
    for job, account, started in [
        ("b#job", ACCOUNT, "2026-11-02"),
        ("a", ACCOUNT, "2026-11-03"),
        ("a", "210987654321", "2026-11-01"),
        ("a", ACCOUNT, "2026-11-01"),
    ]:
        change = RollupChange(job, account, counters={"n_instances": 1})
        change.at_most["started_at"] = started
        change.add_strings["tag_values"] = {f"team={account}"}
        uow = UnitOfWork(table)
        op = store.stage(uow, change)
        assert op is not None
        # The item's identity and index keys are sent until the item is known to exist
        # (the store keeps what it wrote).
        known = (job, account) == ("a", ACCOUNT) and started == "2026-11-01"
        assert (op.set_if_absent == {}) is known
        uow.commit()
    uow = UnitOfWork(table)
    later = RollupStore(table).stage(uow, RollupChange("a", ACCOUNT, counters={"n_running": 1}))
    assert later is not None and later.set_if_absent == {}  # read, then known
    uow.commit()
    rollups = RollupStore(table).all()  # a new container: one Query
    assert [(r["job_id"], r["account"]) for r in rollups] == [  # by job, then account
        ("a", ACCOUNT),
        ("a", "210987654321"),
        ("b#job", ACCOUNT),
    ]
    mine = {r["account"]: r for r in RollupStore(table).of_job("a")}
    assert mine[ACCOUNT]["n_instances"] == 2 and mine[ACCOUNT]["started_at"] == "2026-11-01"
    assert mine[ACCOUNT]["n_running"] == 1 and mine[ACCOUNT]["kind"] == "rollup"
    assert mine[ACCOUNT]["tag_values"] == {f"team={ACCOUNT}"}
    # Nothing new: no write at all.
    again = RollupChange("a", ACCOUNT, add_strings={"tag_values": {f"team={ACCOUNT}"}})
    assert RollupStore(table).stage(UnitOfWork(table), again) is None


def test_checkpoint_steps_and_unmatched_objects(table: Table) -> None:
    store = CheckpointStore(table)
    written(table, lambda uow: store.stage_step(uow, "j", "7", "2026-11-01T00:00:10Z", True, None))
    later = UnitOfWork(table)
    store.stage_step(later, "j", "7", "2026-11-01T00:00:30Z", True, "2026-11-01T00:00:30Z")
    stale = UnitOfWork(table)
    CheckpointStore(table).stage_step(
        stale, "j", "7", "2026-11-01T00:00:05Z", True, None, read=False
    )
    later.commit()
    with pytest.raises(ConditionFailed):  # it guessed "no marker yet": wrong
        stale.commit()
    marker = CheckpointStore(table).step_marker("j", "7")
    assert marker is not None
    assert (marker["first_write"], marker["last_write"], marker["objects"]) == (
        "2026-11-01T00:00:10Z",
        "2026-11-01T00:00:30Z",
        2,
    )
    table.transact([store.unmatched("b", "logs/x.txt", "e1", T0)])
    table.transact([store.unmatched("b", "logs/x.txt", "e1", T0)])
    table.transact([store.unmatched("a", "z", "e2", T0)])
    assert store.unmatched_objects() == [("a", "z"), ("b", "logs/x.txt")]


def test_training_and_reservation_heads_are_versioned_and_indexed(table: Table) -> None:
    training, reservations = TrainingStore(table), ReservationStore(table)
    head = training_head(None)
    written(table, lambda uow: training.stage(uow, head, None))
    with pytest.raises(ConditionFailed):
        written(table, lambda uow: TrainingStore(table).stage(uow, head, None))
    unpriced = [i["kind"] for i in table.query(schema.UNPRICED, index=schema.UNPRICED_INDEX.name)]
    assert unpriced == ["training"]
    written(table, lambda uow: TrainingStore(table).stage(uow, training_head(Decimal(1)), 1))
    assert list(table.query(schema.UNPRICED, index=schema.UNPRICED_INDEX.name)) == []
    stored = TrainingStore(table).head(head.job_id, head.account, head.name)
    assert stored is not None and stored.version == 2

    live, done = reservation_head("cr-1"), reservation_head("cr-2")
    written(
        table,
        lambda uow: reservations.stage(uow, live, None),
        lambda uow: reservations.stage(uow, done, None, indexed=False),
    )
    assert [h.reservation_id for h in ReservationStore(table).refreshed()] == [live.reservation_id]
    written(table, lambda uow: reservations.stage(uow, live, 1, indexed=False))
    assert ReservationStore(table).refreshed() == []
