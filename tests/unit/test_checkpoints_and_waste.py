"""Checkpoint storage (rule 4), rerun waste (rule 5) and the checkpoint use case."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from shared.clock import FixedClock
from shared.config import CheckpointConfig, LedgerConfig, PriceOverrides
from shared.costing import (
    GIB,
    checkpoint_storage_cost,
    job_cost,
    merge_windows,
    object_spans,
)
from shared.models import (
    CheckpointObject,
    InstanceProfile,
    InstanceRecord,
    ObjectDelete,
    ObjectWrite,
    Rate,
    RateSource,
    RateStep,
    SpotNotice,
    Transition,
)
from shared.pricing import PriceBook, bundled_snapshot
from shared.services.checkpoints import record_object_event
from shared.services.instance_state import LedgerDeps, record_spot_notice, record_state_change
from tests.fakes import FakeInventory, InMemoryLedger

T0 = datetime(2026, 11, 1, tzinfo=UTC)
S3_RATE = Rate(
    list_usd=Decimal("0.023"),
    effective_usd=Decimal("0.023"),
    source=RateSource.OVERRIDE,
    checked_on=T0.date(),
    region="us-east-1",
)


def at(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


def obj(writes=(), deletes=(), step=None) -> CheckpointObject:  # type: ignore[no-untyped-def]
    return CheckpointObject(
        bucket="b",
        key="k",
        job_id="j",
        step=step,
        region="us-east-1",
        rate=S3_RATE,
        writes=tuple(
            ObjectWrite(event_id=f"w{n}", at=at(s), size_bytes=size)
            for n, (s, size) in enumerate(writes)
        ),
        deletes=tuple(ObjectDelete(event_id=f"d{n}", at=at(s)) for n, s in enumerate(deletes)),
    )


def test_overwrite_ends_the_previous_version_and_delete_ends_the_last() -> None:
    spans = object_spans(obj(writes=[(0, 100), (60, 200)], deletes=[120]))
    assert [(s.start, s.end, s.size_bytes) for s in spans] == [
        (at(0), at(60), 100),
        (at(60), at(120), 200),
    ]


def test_delete_before_write_in_arrival_order_still_folds_by_time() -> None:
    spans = object_spans(obj(writes=[(0, 100)], deletes=[30]))
    assert [(s.start, s.end) for s in spans] == [(at(0), at(30))]


def test_storage_is_gib_times_rate_prorated_per_second() -> None:
    one_gib_for_a_day = obj(writes=[(0, 2**30)], deletes=[86400])
    assert checkpoint_storage_cost(one_gib_for_a_day, at(10**6)) == Decimal("0.023") / 30
    still_there = obj(writes=[(0, 2**30)])
    assert checkpoint_storage_cost(still_there, at(86400)) == Decimal("0.023") / 30
    assert GIB == 1073741824


def test_unknown_s3_price_is_none_not_zero() -> None:
    assert (
        checkpoint_storage_cost(obj(writes=[(0, 10)]).model_copy(update={"rate": None}), at(10))
        is None
    )


def test_overlapping_rerun_windows_are_merged() -> None:
    assert merge_windows([(at(0), at(10)), (at(5), at(20)), (at(30), at(40))]) == [
        (at(0), at(20)),
        (at(30), at(40)),
    ]


def _spot_record(iid: str, transitions, notices=()) -> InstanceRecord:  # type: ignore[no-untyped-def]
    rate = Rate(
        list_usd=Decimal(36),
        effective_usd=Decimal(36),
        source=RateSource.OVERRIDE,
        checked_on=T0.date(),
        region="us-east-1",
    )
    trs = tuple(
        Transition(event_id=f"{iid}-{n}", at=at(s), state=st)
        for n, (s, st) in enumerate(transitions)
    )
    return InstanceRecord(
        profile=InstanceProfile(
            instance_id=iid, instance_type="p5.48xlarge", region="us-east-1", lifecycle="spot"
        ),
        job_id="j",
        transitions=trs,
        spot_notices=tuple(
            SpotNotice(event_id=f"{iid}-n{n}", at=at(s), action=a)
            for n, (s, a) in enumerate(notices)
        ),
        segment_rates={trs[0].event_id: (RateStep(since=at(0), rate=rate),)},
    )


def test_rerun_without_any_checkpoint_starts_at_the_job_start() -> None:
    a = _spot_record("i-1", [(0, "running"), (1000, "terminated")], [(880, "terminate")])
    cost = job_cost("j", [a], at(2000), ())
    assert cost.wasted_rerun_usd == Decimal(10)  # 1000 s x $36/h, all of it lost
    assert cost.instance_usd == Decimal(10) and cost.status == "interrupted"


def test_rerun_counts_every_instance_of_the_job_inside_the_window() -> None:
    a = _spot_record("i-1", [(0, "running"), (1000, "terminated")], [(880, "terminate")])
    b = _spot_record("i-2", [(0, "running"), (3600, "terminated")])
    ckpt = obj(writes=[(500, 10)], step=100)
    cost = job_cost("j", [a, b], at(4000), (), [ckpt])
    # window [500, 1000]: 500 s on each instance at $36/h = 5 + 5
    assert cost.wasted_rerun_usd == Decimal(10)
    assert cost.checkpoints == 1 and cost.interruptions == 1


def _deps(profile: InstanceProfile, config: LedgerConfig) -> LedgerDeps:
    ledger = InMemoryLedger()
    return LedgerDeps(
        ledger=ledger,
        inventory=FakeInventory(profile),
        prices=PriceBook(config, ledger, None, bundled_snapshot(), T0.date()),
        clock=FixedClock(at(0)),
        config=config,
    )


def test_hibernate_warning_bills_through_stopping_until_stopped() -> None:
    profile = InstanceProfile(
        instance_id="i-0000000000000abcd",
        instance_type="p5.48xlarge",
        region="us-east-1",
        lifecycle="spot",
        tags={"training-job": "hib"},
    )
    config = LedgerConfig(
        live_prices=False, prices=PriceOverrides(spot={"p5.48xlarge": Decimal(36)})
    )
    deps = _deps(profile, config)
    iid = profile.instance_id
    for eid, sec, st in [("r", 0, "running"), ("s1", 1000, "stopping"), ("s2", 1300, "stopped")]:
        record_state_change(
            deps, event_id=eid, at=at(sec), instance_id=iid, state=st, region="us-east-1"
        )
    record_spot_notice(
        deps, event_id="n", at=at(880), instance_id=iid, action="hibernate", region="us-east-1"
    )
    items = deps.ledger.job_items("hib")
    assert items is not None
    cost = job_cost("hib", items.instances, at(2000), ())
    assert cost.billed_seconds == 1300 and cost.instance_usd == Decimal(13)


def test_url_encoded_keys_are_decoded_and_unmatched_keys_counted() -> None:
    profile = InstanceProfile(
        instance_id="i-0000000000000abcd", instance_type="m5.large", region="us-east-1"
    )
    config = LedgerConfig(live_prices=False, checkpoint=CheckpointConfig(buckets=("b",)))
    deps = _deps(profile, config)
    out = record_object_event(
        deps,
        event_id="e1",
        at=at(0),
        region="us-east-1",
        bucket="b",
        raw_key="runs/my+job/step-7/a%2Bb.pt",
        size_bytes=5,
    )
    assert (out.job_id, out.step, out.key) == ("my job", 7, "runs/my job/step-7/a+b.pt")
    assert (
        record_object_event(
            deps,
            event_id="e1",
            at=at(0),
            region="us-east-1",
            bucket="b",
            raw_key="runs/my+job/step-7/a%2Bb.pt",
            size_bytes=5,
        ).result
        == "duplicate"
    )
    missing = record_object_event(
        deps,
        event_id="e2",
        at=at(0),
        region="us-east-1",
        bucket="b",
        raw_key="logs/x.txt",
        size_bytes=1,
    )
    assert missing.result == "unmatched"
    assert deps.ledger.unmatched_objects() == [("b", "logs/x.txt")]
    stored = deps.ledger.get_checkpoint("b", "runs/my job/step-7/a+b.pt")
    assert stored is not None and stored.rate is not None
    assert stored.rate.source.value == "snapshot"  # S3 price with its provenance


def test_unknown_s3_price_is_filled_in_by_the_backfill_and_alerted_once() -> None:
    from shared.services.price_backfill import backfill_prices
    from tests.fakes import RecordingNotifier

    profile = InstanceProfile(
        instance_id="i-0000000000000abcd", instance_type="m5.large", region="us-east-1"
    )
    config = LedgerConfig(live_prices=False)
    deps = _deps(profile, config)
    record_object_event(
        deps,
        event_id="e1",
        at=at(0),
        region="eu-north-1",
        bucket="b",
        raw_key="runs/j/step-1/a.pt",
        size_bytes=2**30,
    )
    stored = deps.ledger.get_checkpoint("b", "runs/j/step-1/a.pt")
    assert stored is not None and stored.rate is None  # no snapshot price for eu-north-1
    notifier = RecordingNotifier()
    result = backfill_prices(deps, notifier)
    assert result.missing == ("s3:standard:eu-north-1",)
    assert [a.subject for a in notifier.sent] == ["No s3 price for standard in eu-north-1"]
    deps.prices = PriceBook(
        LedgerConfig(live_prices=False, prices=PriceOverrides(s3_gb_month=Decimal("0.03"))),
        deps.ledger,
        None,
        bundled_snapshot(),
        T0.date(),
    )
    assert backfill_prices(deps, notifier).repriced == ("s3://b/runs/j/step-1/a.pt",)
    items = deps.ledger.job_items("j")
    assert items is not None
    assert checkpoint_storage_cost(items.checkpoints[0], at(86400)) == Decimal("0.001")
