"""The state-change use case against in-memory twins: writes, dedup, ordering, prices."""

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest

from shared.clock import FixedClock
from shared.config import LedgerConfig, PriceOverrides
from shared.costing import job_cost
from shared.models import InstanceProfile, Volume
from shared.pricing import PriceBook, bundled_snapshot
from shared.services.day_boundary import mark_running_jobs_active
from shared.services.instance_state import LedgerDeps, record_state_change
from shared.services.price_backfill import backfill_prices
from tests.fakes import FakeInventory, InMemoryLedger, RecordingNotifier

T0 = datetime(2026, 11, 1, 10, 0, tzinfo=UTC)
TRN = InstanceProfile(
    instance_id="i-0aaaaaaaaaaaaaaa1",
    instance_type="trn1.32xlarge",
    region="us-east-1",
    tags={"training-job": "llama", "project": "llama", "team": "nlp"},
    volumes=(Volume(volume_id="vol-1", size_gib=512, volume_type="gp3"),),
)
NEW_TYPE = InstanceProfile(
    instance_id="i-0aaaaaaaaaaaaaaa2",
    instance_type="trn2.48xlarge",
    region="us-east-1",
    tags={"training-job": "trial"},
)
CPU = InstanceProfile(
    instance_id="i-0aaaaaaaaaaaaaaa3", instance_type="m5.large", region="us-east-1"
)


def make_deps(config: LedgerConfig | None = None, now: datetime = T0) -> LedgerDeps:
    config = config or LedgerConfig(live_prices=False)
    ledger = InMemoryLedger()
    clock = FixedClock(now)
    return LedgerDeps(
        ledger=ledger,
        inventory=FakeInventory(TRN, NEW_TYPE, CPU),
        prices=PriceBook(config, ledger, None, bundled_snapshot(), now.date()),
        clock=clock,
        config=config,
    )


def send(deps: LedgerDeps, eid: str, seconds: int, state: str, iid: str = TRN.instance_id):
    return record_state_change(
        deps,
        event_id=eid,
        at=T0 + timedelta(seconds=seconds),
        instance_id=iid,
        state=state,
        region="us-east-1",
    )


def cost_of(deps: LedgerDeps, job: str, now: datetime):
    items = deps.ledger.job_items(job)
    assert items is not None
    return job_cost(job, items.instances, now, deps.config.tracking.grouping_tag_keys)


def test_a_state_event_writes_at_most_twice_and_a_duplicate_not_at_all() -> None:
    deps = make_deps()
    ledger = deps.ledger
    assert isinstance(ledger, InMemoryLedger)
    send(deps, "e1", 0, "running")
    assert ledger.writes == 2  # instance record + job-day marker
    before = ledger.writes
    assert send(deps, "e1", 0, "running").result == "duplicate"
    assert ledger.writes == before
    deps.clock.advance_to(T0 + timedelta(hours=1))  # type: ignore[attr-defined]
    send(deps, "e2", 3600, "stopped")
    assert ledger.writes - before <= 2
    assert deps.inventory.calls == 1  # type: ignore[attr-defined]


def test_pending_is_ignored_without_any_call() -> None:
    deps = make_deps()
    assert send(deps, "e0", 0, "pending").result == "ignored"
    assert deps.inventory.calls == 0  # type: ignore[attr-defined]


def test_untagged_cpu_instance_is_ignored_and_remembered() -> None:
    deps = make_deps()
    assert send(deps, "e1", 0, "running", CPU.instance_id).result == "untracked"
    assert send(deps, "e2", 60, "stopped", CPU.instance_id).result == "untracked"
    assert deps.inventory.calls == 1  # type: ignore[attr-defined]


def test_cost_is_priced_from_the_snapshot_with_its_label() -> None:
    deps = make_deps()
    send(deps, "e1", 0, "running")
    send(deps, "e2", 1800, "stopped")
    cost = cost_of(deps, "llama", T0 + timedelta(hours=2))
    assert cost.instance_usd == Decimal("10.75")  # 1800 s x $21.50/h
    (segment,) = cost.instances[0].segments
    assert segment.steps[0].rate.source.value == "snapshot"
    assert segment.steps[0].rate.checked_on == bundled_snapshot().checked_on


def test_discount_gives_an_effective_rate_beside_the_list_rate() -> None:
    deps = make_deps(LedgerConfig(live_prices=False, discounts={"trn1": Decimal("0.25")}))
    send(deps, "e1", 0, "running")
    send(deps, "e2", 3600, "stopped")
    cost = cost_of(deps, "llama", T0 + timedelta(hours=2))
    assert (cost.instance_list_usd, cost.instance_usd) == (Decimal("21.50"), Decimal("16.125"))


def test_unknown_price_is_kept_unpriced_reported_and_filled_in_later() -> None:
    deps = make_deps()
    send(deps, "e1", 0, "running", NEW_TYPE.instance_id)
    send(deps, "e2", 7200, "stopped", NEW_TYPE.instance_id)
    cost = cost_of(deps, "trial", T0 + timedelta(hours=3))
    assert cost.instance_usd == 0 and cost.billed_seconds == 7200
    assert "unpriced:ec2:trn2.48xlarge:us-east-1" in cost.unconfirmed

    notifier = RecordingNotifier()
    result = backfill_prices(deps, notifier)
    assert result.missing == ("ec2:trn2.48xlarge:us-east-1",)
    assert [a.subject for a in notifier.sent] == ["No ec2 price for trn2.48xlarge in us-east-1"]
    backfill_prices(deps, notifier)
    assert len(notifier.sent) == 1  # once a day per missing price

    # An admin configures the price: the next run fills it in.
    priced_config = LedgerConfig(
        live_prices=False, prices=PriceOverrides(ec2={"trn2.48xlarge": Decimal("40")})
    )
    deps.prices = PriceBook(priced_config, deps.ledger, None, bundled_snapshot(), T0.date())
    assert backfill_prices(deps, notifier).repriced == (NEW_TYPE.instance_id,)
    cost = cost_of(deps, "trial", T0 + timedelta(hours=3))
    assert cost.instance_usd == Decimal(80) and not cost.unpriced


def test_out_of_order_and_duplicated_events_converge() -> None:
    ordered = make_deps()
    for eid, sec, st in [
        ("r", 0, "running"),
        ("s", 600, "stopped"),
        ("r2", 900, "running"),
        ("x", 1000, "terminated"),
    ]:
        send(ordered, eid, sec, st)
    shuffled = make_deps()
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
    a, b = cost_of(ordered, "llama", now), cost_of(shuffled, "llama", now)
    assert a.instance_usd == b.instance_usd
    assert abs(a.instance_usd - Decimal(700) * Decimal("21.50") / 3600) < Decimal("1e-12")
    assert a.ebs_usd == b.ebs_usd and a.status == b.status == "complete"


def test_day_boundary_marks_running_jobs_and_late_events_mark_missed_days() -> None:
    deps = make_deps()
    ledger = deps.ledger
    assert isinstance(ledger, InMemoryLedger)
    send(deps, "r", 0, "running")
    mark_running_jobs_active(ledger, date(2026, 11, 2), ("project",))
    assert ledger.jobs_active_on(date(2026, 11, 2)) == ["llama"]

    # A segment first seen after it ended two days later: every day it spans is marked.
    late = make_deps(now=T0 + timedelta(days=2, hours=1))
    send(late, "s", 2 * 86400, "stopped")
    send(late, "r", 0, "running")
    assert late.ledger.jobs_active_on(date(2026, 11, 2)) == ["llama"]
    assert late.ledger.jobs_active_on(date(2026, 11, 1)) == ["llama"]


def test_concurrent_writer_is_retried_not_overwritten() -> None:
    deps = make_deps()
    send(deps, "r", 0, "running")
    ledger = deps.ledger
    assert isinstance(ledger, InMemoryLedger)
    real_save = ledger.save_instance
    calls = {"n": 0}

    def racing_save(record, expected_version):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 1:  # someone else lands a transition first
            other = ledger.get_instance(TRN.instance_id)
            real_save(other, other.version)  # type: ignore[arg-type, union-attr]
        real_save(record, expected_version)

    ledger.save_instance = racing_save  # type: ignore[method-assign]
    send(deps, "s", 60, "stopped")
    assert calls["n"] == 2
    cost = cost_of(deps, "llama", T0 + timedelta(hours=1))
    assert cost.billed_seconds == 60


@pytest.mark.parametrize("hours", [0, 1])
def test_instance_not_yet_known_to_ec2_is_raised_for_retry(hours: int) -> None:
    from shared.inventory import InstanceNotFound

    deps = make_deps()
    with pytest.raises(InstanceNotFound):
        send(deps, "r", hours, "running", "i-0ffffffffffffffff")
