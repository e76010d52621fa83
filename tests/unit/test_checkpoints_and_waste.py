"""Checkpoint storage (rule 4), rerun waste (rule 5) and the checkpoint use case."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from costtracker.fakes.twins import RecordingNotifier
from shared.config.ledger import CheckpointConfig, LedgerConfig, PriceOverrides
from shared.domain import accrual as acc
from shared.domain.base import Rate, RateSource
from shared.domain.checkpoint import (
    WINDOW,
    CheckpointHead,
    ObjectEvent,
    apply_object_event,
    fold_versions,
    object_accrual,
)
from shared.domain.instance import InstanceProfile
from shared.domain.job import last_write_before, merge_windows, write_times
from shared.services.instances import record_spot_notice, record_state_change
from shared.services.price_backfill import backfill_prices
from tests.support import (
    ACCOUNT,
    REGION,
    Ledger,
    TransactionLog,
    memory_ledger,
    object_event,
    with_prices,
)

T0 = datetime(2026, 11, 1, tzinfo=UTC)
S3_RATE = Rate(
    list_usd=Decimal("0.023"),
    effective_usd=Decimal("0.023"),
    source=RateSource.OVERRIDE,
    checked_on=T0.date(),
    region=REGION,
)


def at(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


def write(eid: str, seconds: int, size: int, sequencer: str = "") -> ObjectEvent:
    return ObjectEvent(event_id=eid, at=at(seconds), size_bytes=size, sequencer=sequencer)


def delete(eid: str, seconds: int, sequencer: str = "") -> ObjectEvent:
    return ObjectEvent(event_id=eid, at=at(seconds), sequencer=sequencer)


def head(*events: ObjectEvent, rate: Rate | None = S3_RATE) -> CheckpointHead:
    h = CheckpointHead(bucket="b", key="k", job_id="j", region=REGION, rate=rate)
    for event in events:
        h = apply_object_event(h, event).head
    return h


def test_overwrite_ends_the_previous_version_and_delete_ends_the_last() -> None:
    versions = fold_versions([write("w0", 0, 100), write("w1", 60, 200), delete("d0", 120)], None)
    assert [(v.start, v.end, v.size_bytes) for v in versions] == [
        (at(0), at(60), 100),
        (at(60), at(120), 200),
    ]


def test_delete_before_write_in_arrival_order_still_folds_by_time() -> None:
    versions = fold_versions([delete("d0", 30), write("w0", 0, 100)], None)
    assert [(v.start, v.end) for v in versions] == [(at(0), at(30))]
    # Same second: S3's sequencer orders a write and the deletion that followed it.
    same = fold_versions([delete("d", 0, "0B"), write("w", 0, 100, "0A")], None)
    assert [(v.write_event_id, v.end_event_id) for v in same] == [("w", "d")]


def test_storage_is_gib_times_rate_prorated_per_second() -> None:
    one_gib_for_a_day = head(write("w", 0, 2**30), delete("d", 86400))
    assert object_accrual(one_gib_for_a_day).value(acc.STORAGE, at(10**6)) == Decimal("0.023") / 30
    still_there = head(write("w", 0, 2**30))
    assert object_accrual(still_there).value(acc.STORAGE, at(86400)) == Decimal("0.023") / 30


def test_an_object_overwritten_many_times_keeps_a_bounded_head_and_every_second() -> None:
    # 100 overwrites of 1 GiB, one an hour: the head keeps only its window, the sealed
    # total holds the rest; 100 hours of 1 GiB in November = 0.023 x 100 / 720.
    events = [write(f"w{n}", 3600 * n, 2**30) for n in range(100)]
    h = head(*events, delete("d", 3600 * 100))
    assert len(h.window) == WINDOW and len(h.versions) <= WINDOW
    assert h.writes == 100
    total = object_accrual(h).value(acc.STORAGE, at(10**7))
    assert total == Decimal("0.023") * 100 / 720


def test_unknown_s3_price_is_unpriced_not_zero() -> None:
    unpriced = object_accrual(head(write("w", 0, 10), rate=None))
    assert unpriced.value(acc.STORAGE, at(10)) == 0
    assert unpriced.value("unpriced:s3:standard:us-east-1", at(10)) > 0


def test_an_event_makes_the_heads_next_version_written_as_it_is() -> None:
    from shared.adapters.checkpoint_store import CheckpointStore
    from shared.adapters.table import MemoryTable
    from shared.adapters.unit_of_work import UnitOfWork

    first = apply_object_event(head(), write("w", 0, 100)).head
    assert first.version == 1
    store = CheckpointStore(MemoryTable())
    uow = UnitOfWork(store.table)
    store.stage_head(uow, first, None)
    uow.commit()
    assert store.head("j", "", "b", "k") is first  # at its next version already: no copy
    second = apply_object_event(first, delete("d", 60)).head
    assert second.version == 2
    # Staged at another version (another writer's), the head is written at that one's next.
    uow = UnitOfWork(store.table)
    assert store.stage_head(uow, second, 1).item["version"] == 2
    assert store.stage_head(UnitOfWork(store.table), second, 6).item["version"] == 7


def test_the_last_write_before_a_moment_is_read_from_the_writes_in_order() -> None:
    steps = [
        {"first_write": "2026-11-01T00:10:00Z", "last_write": "2026-11-01T00:20:00Z"},
        {"first_write": "2026-11-01T00:05:00+00:00", "complete_at": "2026-11-01T00:30:00Z"},
        {"step": "no writes"},
    ]
    times = write_times(steps, marker=False)
    assert times == [T0 + timedelta(minutes=m) for m in (5, 10, 20)]
    assert last_write_before(times, T0) is None
    assert last_write_before(times, T0 + timedelta(minutes=10)) == T0 + timedelta(minutes=10)
    assert last_write_before(times, T0 + timedelta(minutes=19)) == T0 + timedelta(minutes=10)
    assert last_write_before(times, T0 + timedelta(days=1)) == T0 + timedelta(minutes=20)
    assert write_times(steps, marker=True) == [T0 + timedelta(minutes=30)]


def test_overlapping_rerun_windows_are_merged() -> None:
    assert merge_windows([(at(0), at(10)), (at(5), at(20)), (at(30), at(40))]) == [
        (at(0), at(20)),
        (at(30), at(40)),
    ]


SPOT = LedgerConfig(live_prices=False, prices=PriceOverrides(spot={"p5.48xlarge": Decimal(36)}))


def spot(iid: str, job: str = "j") -> InstanceProfile:
    return InstanceProfile(
        instance_id=iid,
        instance_type="p5.48xlarge",
        region=REGION,
        lifecycle="spot",
        tags={"training-job": job},
    )


I1, I2 = "i-0000000000000001a", "i-0000000000000002a"


def state(ledger: Ledger, iid: str, eid: str, seconds: int, st: str) -> None:
    record_state_change(
        ledger.deps,
        event_id=eid,
        at=at(seconds),
        instance_id=iid,
        state=st,
        region=REGION,
        account=ACCOUNT,
    )


def notice(ledger: Ledger, iid: str, eid: str, seconds: int, action: str) -> None:
    record_spot_notice(
        ledger.deps,
        event_id=eid,
        at=at(seconds),
        instance_id=iid,
        action=action,
        region=REGION,
        account=ACCOUNT,
    )


def checkpoint(
    ledger: Ledger, eid: str, seconds: int, key: str, size: int | None = 10, region: str = REGION
):  # type: ignore[no-untyped-def]
    return object_event(ledger, eid, at(seconds), key, size, region=region)


def test_rerun_without_any_checkpoint_starts_at_the_job_start() -> None:
    ledger = memory_ledger(spot(I1), config=SPOT, now=at(2000))
    state(ledger, I1, "r", 0, "running")
    notice(ledger, I1, "n", 880, "terminate")
    state(ledger, I1, "x", 1000, "terminated")
    cost = ledger.job("j", at(2000))
    assert cost.wasted_rerun_usd == Decimal(10)  # 1000 s x $36/h, all of it lost
    assert cost.instance_usd == Decimal(10) and cost.status == "interrupted"


def test_rerun_counts_every_instance_of_the_job_inside_the_window() -> None:
    ledger = memory_ledger(spot(I1), spot(I2), config=SPOT, now=at(4000))
    state(ledger, I1, "r1", 0, "running")
    state(ledger, I2, "r2", 0, "running")
    checkpoint(ledger, "ck", 500, "runs/j/step-100/model.pt")
    notice(ledger, I1, "n", 880, "terminate")
    state(ledger, I1, "x1", 1000, "terminated")
    state(ledger, I2, "x2", 3600, "terminated")
    cost = ledger.job("j", at(4000))
    # window [500, 1000]: 500 s on each instance at $36/h = 5 + 5
    assert cost.wasted_rerun_usd == Decimal(10)
    assert cost.checkpoints == 1 and cost.interruptions == 1
    assert cost.instance_usd == Decimal(46)  # 1000 s + 3600 s at $36/h


def test_a_rebalance_recommendation_is_not_an_interruption() -> None:
    ledger = memory_ledger(spot(I1), config=SPOT, now=at(2000))
    state(ledger, I1, "r", 0, "running")
    notice(ledger, I1, "n", 500, "rebalance")
    state(ledger, I1, "x", 1000, "terminated")
    cost = ledger.job("j", at(2000))
    assert cost.wasted_rerun_usd == 0 and cost.interruptions == 0
    assert cost.rebalance_recommendations == 1 and cost.status == "complete"


def test_hibernate_warning_bills_through_stopping_until_stopped() -> None:
    profile = spot("i-0000000000000abcd", "hib")
    ledger = memory_ledger(profile, config=SPOT, now=at(2000))
    for eid, sec, st in [("r", 0, "running"), ("s1", 1000, "stopping"), ("s2", 1300, "stopped")]:
        state(ledger, profile.instance_id, eid, sec, st)
    notice(ledger, profile.instance_id, "n", 880, "hibernate")  # arrives last
    cost = ledger.job("hib", at(2000))
    assert cost.billed_seconds == 1300 and cost.instance_usd == Decimal(13)
    assert ledger.rollup_value("hib", "instance", at(2000)) == Decimal(13)


def test_url_encoded_keys_are_decoded_and_unmatched_keys_counted() -> None:
    config = LedgerConfig(live_prices=False, checkpoint=CheckpointConfig(buckets=("b",)))
    ledger = memory_ledger(config=config, now=at(0))
    out = checkpoint(ledger, "e1", 0, "runs/my+job/step-7/a%2Bb.pt", size=5)
    assert (out.job_id, out.step, out.key) == ("my job", 7, "runs/my job/step-7/a+b.pt")
    assert checkpoint(ledger, "e1", 0, "runs/my+job/step-7/a%2Bb.pt", size=5).result == "duplicate"
    missing = checkpoint(ledger, "e2", 0, "logs/x.txt", size=1)
    assert missing.result == "unmatched"
    assert ledger.checkpoints.unmatched_objects() == [("b", "logs/x.txt")]
    stored = ledger.checkpoints.head("my job", ACCOUNT, "b", "runs/my job/step-7/a+b.pt")
    assert stored is not None and stored.rate is not None
    assert stored.rate.source.value == "snapshot"  # S3 price with its provenance


def test_a_checkpoint_event_writes_at_most_four_items_and_a_duplicate_nothing() -> None:
    ledger = memory_ledger(now=at(0))
    log = TransactionLog(ledger.table)
    checkpoint(ledger, "w1", 0, "runs/j/step-1/a.pt")
    checkpoint(ledger, "w2", 60, "runs/j/step-1/a.pt")  # overwrite: seals the first version
    checkpoint(ledger, "w2", 60, "runs/j/step-1/a.pt")
    # head + step marker + rollup; the overwrite adds the sealed version
    assert log.sizes == [3, 4]


def test_checkpoints_of_a_job_with_no_instance_make_a_job_with_storage_only() -> None:
    ledger = memory_ledger(now=at(0))
    checkpoint(ledger, "w", 0, "runs/orphan/step-3/a.pt", size=2**30)
    cost = ledger.job("orphan", at(86400))
    assert cost.instance_usd == 0 and cost.checkpoints == 1
    assert cost.checkpoint_storage_usd == Decimal("0.023") / 30
    assert cost.total_usd == cost.checkpoint_storage_usd


def test_unknown_s3_price_is_filled_in_by_the_backfill_and_alerted_once() -> None:
    ledger = memory_ledger(config=LedgerConfig(live_prices=False), now=at(0))
    checkpoint(ledger, "e1", 0, "runs/j/step-1/a.pt", size=2**30, region="eu-north-1")
    stored = ledger.checkpoints.head("j", ACCOUNT, "b", "runs/j/step-1/a.pt")
    assert stored is not None and stored.rate is None  # no snapshot price for eu-north-1
    assert ledger.job("j", at(86400)).unpriced == ("s3:standard:eu-north-1",)
    notifier = RecordingNotifier()
    result = backfill_prices(ledger.deps, notifier, ledger.checkpoints)
    assert result.missing == ("s3:standard:eu-north-1",)
    assert [a.subject for a in notifier.sent] == ["No s3 price for standard in eu-north-1"]
    backfill_prices(ledger.deps, notifier, ledger.checkpoints)
    assert len(notifier.sent) == 1  # once a day per missing price
    with_prices(
        ledger, LedgerConfig(live_prices=False, prices=PriceOverrides(s3_gb_month=Decimal("0.03")))
    )
    assert backfill_prices(ledger.deps, notifier, ledger.checkpoints).repriced == (
        "s3://b/runs/j/step-1/a.pt",
    )
    cost = ledger.job("j", at(86400))
    assert cost.checkpoint_storage_usd == Decimal("0.001") and cost.complete


def test_backfill_prices_every_version_of_an_often_overwritten_object() -> None:
    ledger = memory_ledger(config=LedgerConfig(live_prices=False), now=at(0))
    key = "runs/j/step-1/a.pt"
    for n in range(12):  # 12 versions of 1 GiB, one an hour (more than the head's window)
        checkpoint(ledger, f"w{n}", 3600 * n, key, size=2**30, region="eu-north-1")
    checkpoint(ledger, "d", 3600 * 12, key, size=None, region="eu-north-1")
    with_prices(
        ledger, LedgerConfig(live_prices=False, prices=PriceOverrides(s3_gb_month=Decimal("0.03")))
    )
    backfill_prices(ledger.deps, RecordingNotifier(), ledger.checkpoints)
    cost = ledger.job("j", at(86400))
    # 12 GiB-hours of November at $0.03/GB-month
    assert cost.checkpoint_storage_usd == Decimal("0.03") * 12 / 720
    assert cost.complete


def test_a_head_is_read_at_its_items_version() -> None:
    from shared.adapters.checkpoint_store import CheckpointStore, checkpoint_of
    from shared.adapters.table import MemoryTable
    from shared.adapters.unit_of_work import UnitOfWork

    store = CheckpointStore(MemoryTable())
    written = head(write("w1", 0, 100), delete("d1", 60))
    uow = UnitOfWork(store.table)
    item = store.stage_head(uow, written, 4).item
    read = checkpoint_of(item)
    parsed = CheckpointHead.model_validate_json(str(item["record"]))
    assert read == written.model_copy(update={"version": 5}) == parsed
    assert read.model_fields_set == parsed.model_copy(update={"version": 5}).model_fields_set
    # An item whose version moved past its record's: the item's version counts.
    assert checkpoint_of({**item, "version": 7}).version == 7
