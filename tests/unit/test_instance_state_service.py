"""The state-change use case over the real stores and the in-memory table: writes per
event, dedup, ordering, prices, active days, races, instances EC2 cannot describe."""

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest

from costtracker.fakes.twins import RecordingNotifier
from shared.adapters.instance_store import InstanceStore
from shared.adapters.pricing_snapshot import bundled_snapshot
from shared.config.ledger import LedgerConfig, PriceOverrides
from shared.domain.ebs import Volume
from shared.domain.instance import InstanceProfile
from shared.services.instances import record_state_change
from shared.services.job_view import active_between, all_rollups
from shared.services.price_backfill import backfill_prices
from tests.support import (
    ACCOUNT,
    REGION,
    Ledger,
    TransactionLog,
    memory_ledger,
    with_prices,
)

T0 = datetime(2026, 11, 1, 10, 0, tzinfo=UTC)
TRN = InstanceProfile(
    instance_id="i-0aaaaaaaaaaaaaaa1",
    instance_type="trn1.32xlarge",
    region=REGION,
    tags={"training-job": "llama", "project": "llama", "team": "nlp"},
    volumes=(Volume(volume_id="vol-1", size_gib=512, volume_type="gp3"),),
)
NEW_TYPE = InstanceProfile(
    instance_id="i-0aaaaaaaaaaaaaaa2",
    instance_type="trn2.48xlarge",
    region=REGION,
    tags={"training-job": "trial"},
)
CPU = InstanceProfile(instance_id="i-0aaaaaaaaaaaaaaa3", instance_type="m5.large", region=REGION)


def make(config: LedgerConfig | None = None, now: datetime = T0) -> Ledger:
    return memory_ledger(TRN, NEW_TYPE, CPU, config=config, now=now)


def send(ledger: Ledger, eid: str, seconds: int, state: str, iid: str = TRN.instance_id):  # type: ignore[no-untyped-def]
    return record_state_change(
        ledger.deps,
        event_id=eid,
        at=T0 + timedelta(seconds=seconds),
        instance_id=iid,
        state=state,
        region=REGION,
        account=ACCOUNT,
    )


def test_a_state_event_writes_at_most_three_items_and_a_duplicate_nothing() -> None:
    ledger = make()
    log = TransactionLog(ledger.table)
    assert send(ledger, "e1", 0, "running").result == "applied"
    # First sight: pointer + head + rollup, in one transaction.
    assert log.sizes == [3]
    mark = log.mark()
    assert send(ledger, "e1", 0, "running").result == "duplicate"
    assert log.since(mark) == [] and ledger.table.calls["transact"] == 1
    ledger.clock.advance_to(T0 + timedelta(hours=1))
    send(ledger, "e2", 3600, "stopped")
    # head + the closed segment + rollup
    assert log.since(mark) == [3]
    assert send(ledger, "e2", 3600, "stopped").result == "duplicate"
    assert log.since(mark) == [3]
    assert ledger.deps.inventory.calls == 1  # type: ignore[attr-defined]


def test_many_cycles_never_write_more_than_three_items_per_event() -> None:
    """Past the head's window (24 transitions) segments are sealed, still in one transaction
    of at most three items per event, and the rollup stays the sum of every segment."""
    ledger = make()
    log = TransactionLog(ledger.table)
    for n in range(40):  # 40 cycles of 100 s running, 50 s stopped
        send(ledger, f"r{n}", 150 * n, "running")
        send(ledger, f"s{n}", 150 * n + 100, "stopped")
    assert len(log.sizes) == 80 and max(log.sizes) <= 3 and not log.failed
    now = T0 + timedelta(hours=3)
    # 40 segments of 100 s, each billed the 100 s it ran, at $21.50/h
    assert ledger.rollup_value("llama", "instance_seconds", now) == 4000
    assert ledger.rollup_value("llama", "instance", now) == Decimal(4000) * Decimal("21.50") / 3600
    assert ledger.job("llama", now).billed_seconds == 4000


def test_pending_is_ignored_without_any_call() -> None:
    ledger = make()
    assert send(ledger, "e0", 0, "pending").result == "ignored"
    assert ledger.deps.inventory.calls == 0  # type: ignore[attr-defined]
    assert ledger.table.calls.get("transact", 0) == 0
    assert ledger.table.calls.get("get", 0) == 0


def test_untagged_cpu_instance_is_ignored_and_remembered() -> None:
    ledger = make()
    assert send(ledger, "e1", 0, "running", CPU.instance_id).result == "untracked"
    assert send(ledger, "e2", 60, "stopped", CPU.instance_id).result == "untracked"
    assert ledger.deps.inventory.calls == 1  # type: ignore[attr-defined]
    # Remembered in the table (a cold container does not describe it again) and nothing
    # else written for it.
    pointer = InstanceStore(ledger.table).pointer(ACCOUNT, CPU.instance_id)
    assert pointer is not None and pointer.job_id is None
    assert len(ledger.table.items) == 1


def test_cost_is_priced_from_the_snapshot_with_its_label() -> None:
    ledger = make()
    send(ledger, "e1", 0, "running")
    send(ledger, "e2", 1800, "stopped")
    cost = ledger.job("llama", T0 + timedelta(hours=2))
    assert cost.instance_usd == Decimal("10.75")  # 1800 s x $21.50/h
    (segment,) = cost.instances[0].segments
    assert segment.pin is not None and segment.pin.rate is not None
    assert segment.pin.source.value == "snapshot"
    assert segment.pin.rate.checked_on == bundled_snapshot().checked_on
    assert f"snapshot:{bundled_snapshot().checked_on.isoformat()}" in cost.price_sources


def test_discount_gives_an_effective_rate_beside_the_list_rate() -> None:
    ledger = make(LedgerConfig(live_prices=False, discounts={"trn1": Decimal("0.25")}))
    send(ledger, "e1", 0, "running")
    send(ledger, "e2", 3600, "stopped")
    cost = ledger.job("llama", T0 + timedelta(hours=2))
    assert (cost.instance_list_usd, cost.instance_usd) == (Decimal("21.50"), Decimal("16.125"))


def test_unknown_price_is_kept_unpriced_reported_and_filled_in_later() -> None:
    ledger = make(now=T0 + timedelta(hours=3))
    send(ledger, "e1", 0, "running", NEW_TYPE.instance_id)
    send(ledger, "e2", 7200, "stopped", NEW_TYPE.instance_id)
    cost = ledger.job("trial")
    assert cost.instance_usd == 0 and cost.billed_seconds == 7200
    assert cost.unpriced == ("ec2:trn2.48xlarge:us-east-1",) and not cost.complete
    assert "unpriced:ec2:trn2.48xlarge:us-east-1" in cost.unconfirmed

    notifier = RecordingNotifier()
    result = backfill_prices(ledger.deps, notifier, ledger.checkpoints)
    assert result.missing == ("ec2:trn2.48xlarge:us-east-1",)
    assert [a.subject for a in notifier.sent] == ["No ec2 price for trn2.48xlarge in us-east-1"]
    backfill_prices(ledger.deps, notifier, ledger.checkpoints)
    assert len(notifier.sent) == 1  # once a day per missing price

    # An admin configures the price: the next run fills it in.
    priced = PriceOverrides(ec2={"trn2.48xlarge": Decimal("40")})
    with_prices(ledger, LedgerConfig(live_prices=False, prices=priced))
    assert backfill_prices(ledger.deps, notifier, ledger.checkpoints).repriced == (
        NEW_TYPE.instance_id,
    )
    cost = ledger.job("trial")
    assert cost.instance_usd == Decimal(80) and not cost.unpriced and cost.complete
    assert ledger.rollup_value("trial", "instance") == Decimal(80)


def test_out_of_order_and_duplicated_events_converge() -> None:
    ordered = make()
    for eid, sec, st in [
        ("r", 0, "running"),
        ("s", 600, "stopped"),
        ("r2", 900, "running"),
        ("x", 1000, "terminated"),
    ]:
        send(ordered, eid, sec, st)
    shuffled = make()
    for eid, sec, st in [
        ("x", 1000, "terminated"),
        ("s", 600, "stopped"),
        ("r2", 900, "running"),
        ("s", 600, "stopped"),
        ("r", 0, "running"),
        ("x", 1000, "terminated"),
    ]:
        send(shuffled, eid, sec, st)
    now = T0 + timedelta(hours=5)
    a, b = ordered.job("llama", now), shuffled.job("llama", now)
    assert a.instance_usd == b.instance_usd
    # 600 s + 100 s (billed 100: above the minimum) at $21.50/h
    assert a.instance_usd == Decimal(700) * Decimal("21.50") / 3600
    assert a.billed_seconds == b.billed_seconds == 700
    # 512 GiB gp3 at $0.08/GB-month from the first running to terminated (1000 s of November)
    assert a.ebs_usd == b.ebs_usd == Decimal(512) * Decimal("0.08") * 1000 / (30 * 86400)
    assert a.status == b.status == "complete"
    assert ordered.rollup_value("llama", "instance", now) == shuffled.rollup_value(
        "llama", "instance", now
    )


def test_a_job_running_across_midnight_is_active_on_both_days() -> None:
    """The rollups know the days a job accrued on (no day-marker write any more)."""
    ledger = make(now=datetime(2026, 11, 1, 23, 0, tzinfo=UTC))
    start = datetime(2026, 11, 1, 23, 0, tzinfo=UTC)
    record_state_change(
        ledger.deps,
        event_id="r",
        at=start,
        instance_id=TRN.instance_id,
        state="running",
        region=REGION,
        account=ACCOUNT,
    )
    now = datetime(2026, 11, 2, 1, 0, tzinfo=UTC)
    rollups = all_rollups(ledger.deps.rollups)["llama"]
    nov1, nov2, nov3 = date(2026, 11, 1), date(2026, 11, 2), date(2026, 11, 3)
    assert active_between(rollups, nov1, nov1, now)
    assert active_between(rollups, nov2, nov2, now)  # still running: active up to now
    assert not active_between(rollups, nov3, nov3, now)
    assert not active_between(rollups, date(2026, 10, 31), date(2026, 10, 31), now)


def test_a_segment_first_seen_after_it_ended_marks_every_day_it_spans() -> None:
    # The end arrives first, two days later; the running arrives after it. (Terminated:
    # a stopped instance's volumes would go on accruing, and its job with them.)
    ledger = make(now=T0 + timedelta(days=2, hours=1))
    send(ledger, "x", 2 * 86400, "terminated")
    send(ledger, "r", 0, "running")
    now = T0 + timedelta(days=3)
    rollups = all_rollups(ledger.deps.rollups)["llama"]
    for day in (date(2026, 11, 1), date(2026, 11, 2), date(2026, 11, 3)):
        assert active_between(rollups, day, day, now), day
    assert not active_between(rollups, date(2026, 11, 4), date(2026, 11, 4), now)
    assert ledger.job("llama", now).billed_seconds == 2 * 86400


def test_concurrent_writer_is_retried_not_overwritten() -> None:
    """Another container lands a transition between our read and our write: our write
    fails on the version, is retried on the fresh head, and both events count once."""
    ledger = make()
    other = memory_ledger(TRN)  # a second container: its own stores, the same table
    other.deps = type(ledger.deps)(
        table=ledger.table,
        instances=InstanceStore(ledger.table),
        rollups=type(ledger.deps.rollups)(ledger.table),
        inventory=other.deps.inventory,
        prices=other.deps.prices,
        clock=other.clock,
        config=other.deps.config,
    )
    send(ledger, "r", 0, "running")
    log = TransactionLog(ledger.table)
    raced: list[bool] = []

    def race(operations) -> None:  # type: ignore[no-untyped-def]
        if not raced:
            raced.append(True)
            send(other, "s0", 30, "stopping")  # lands first

    log.before_each(race)
    assert send(ledger, "s", 60, "stopped").result == "applied"
    assert log.failed == [3]  # our first attempt: refused, nothing written
    now = T0 + timedelta(hours=1)
    head = ledger.deps.instances.head("llama", ACCOUNT, TRN.instance_id)
    assert head is not None and {t.event_id for t in head.window} == {"r", "s0", "s"}
    cost = ledger.job("llama", now)
    assert cost.billed_seconds == 60  # [0, 30] billed as the 60 s minimum, once
    assert ledger.rollup_value("llama", "instance_seconds", now) == 60


@pytest.mark.parametrize("hours", [0, 1])
def test_instance_ec2_cannot_describe_is_tracked_untagged_and_unpriced(hours: int) -> None:
    """docs/cost-rules.md: tracked as untagged:<instance-id>, type unknown, its seconds count, its
    cost
    is unpriced and a warning says why (never lost, never a retry loop)."""
    ledger = make()
    iid = "i-0ffffffffffffffff"
    assert send(ledger, "r", 3600 * hours, "running", iid).result == "applied"
    send(ledger, "s", 3600 * hours + 600, "stopped", iid)
    cost = ledger.job(f"untagged:{iid}", T0 + timedelta(hours=3))
    assert cost.billed_seconds == 600 and cost.instance_usd == 0
    assert cost.unpriced == ("ec2:unknown:us-east-1",) and not cost.complete
    assert [w.kind for w in cost.warnings] == ["inferred_instance"]
    assert cost.instances[0].inferred and cost.instances[0].instance_type == "unknown"


def _unpriced_cycles(monkeypatch, cycles: int = 30) -> Ledger:  # type: ignore[no-untyped-def]
    ledger = make(now=T0 + timedelta(hours=cycles))
    for n in range(cycles):  # more cycles than the head keeps: most segments are sealed
        send(ledger, f"r{n}", 3600 * n, "running", NEW_TYPE.instance_id)
        send(ledger, f"s{n}", 3600 * n + 600, "stopped", NEW_TYPE.instance_id)
    return ledger


def test_backfill_prices_sealed_segments_too(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    ledger = _unpriced_cycles(monkeypatch)
    assert ledger.job("trial").unpriced == ("ec2:trn2.48xlarge:us-east-1",)
    priced = PriceOverrides(ec2={"trn2.48xlarge": Decimal("36")})
    with_prices(ledger, LedgerConfig(live_prices=False, prices=priced))
    backfill_prices(ledger.deps, RecordingNotifier(), ledger.checkpoints)
    cost = ledger.job("trial")
    # 30 segments of 600 s at $36/h
    assert cost.instance_usd == Decimal(180) and cost.billed_seconds == 18000 and cost.complete
    assert ledger.rollup_value("trial", "instance") == Decimal(180)


def test_backfill_does_not_alert_a_price_it_has_just_found(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    ledger = _unpriced_cycles(monkeypatch)
    priced = PriceOverrides(ec2={"trn2.48xlarge": Decimal("36")})
    with_prices(ledger, LedgerConfig(live_prices=False, prices=priced))
    notifier = RecordingNotifier()
    result = backfill_prices(ledger.deps, notifier, ledger.checkpoints)
    assert result.missing == () and notifier.sent == []
