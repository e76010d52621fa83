"""SageMaker training heads and capacity reservations over the real stores and the in-memory
table: idempotent, out-of-order safe, terminal status final, live accrual, unpriced never 0;
a Capacity Block instance priced at its share per second with no minimum; an instance whose
DescribeInstances says ``InstanceLifecycle: capacity-block`` (botocore Stubber)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import boto3
from botocore.stub import Stubber

from shared.adapters.inventory import Ec2Inventory
from shared.adapters.managed_store import ReservationStore, TrainingStore
from shared.adapters.sagemaker import TrainingJobNotFound
from shared.config.ledger import LedgerConfig, PriceOverrides, ReservationConfig
from shared.domain.instance import InstanceProfile
from shared.domain.lifecycle import Span
from shared.domain.managed.models import CapacityReservation, TrainingJobDescription
from shared.services.instances import record_state_change
from shared.services.reservations import ReservationLedger
from shared.services.training_jobs import record_training_event
from tests.support import ACCOUNT, REGION, Ledger, memory_ledger

T0 = datetime(2026, 11, 3, 8, 0, tzinfo=UTC)
RATE = Decimal("24.72")


class Jobs:
    """DescribeTrainingJob's answer once the job ended (None: not found)."""

    def __init__(self, billable: int | None = 4320, training: int = 10800) -> None:
        self.billable, self.training, self.calls = billable, training, 0

    def describe(
        self, name: str, *, event_tags: Mapping[str, str] | None = None
    ) -> TrainingJobDescription:
        self.calls += 1
        if self.billable is None:
            raise TrainingJobNotFound(name, REGION)
        return TrainingJobDescription(
            name=name, status="Stopped", instance_type="ml.trn1.32xlarge", instance_count=2,
            volume_size_gb=600, billable_seconds=self.billable, training_seconds=self.training,
            warm_pool_retained_billable_seconds=0, managed_spot=True, tags=dict(event_tags or {}),
        )  # fmt: skip


def event(status: str, *, start: bool = True, end: bool = False) -> TrainingJobDescription:
    return TrainingJobDescription(
        name="llama-sft-spot-a",
        status=status,
        instance_type="ml.trn1.32xlarge",
        instance_count=2,
        volume_size_gb=600,
        training_start=T0 if start else None,
        training_end=T0 + timedelta(hours=3) if end else None,
        managed_spot=True,
        tags={"training-job": "llama-sft-spot", "project": "llama"},
        region=REGION,
        account=ACCOUNT,
    )


def sagemaker_ledger(rate: bool = True) -> Ledger:
    prices = PriceOverrides(
        sagemaker={"ml.trn1.32xlarge": RATE} if rate else {},
        sagemaker_storage_gb_month=Decimal("0.14"),
    )
    return memory_ledger(config=LedgerConfig(live_prices=False, prices=prices), now=T0)


def send(
    ledger: Ledger, store: TrainingStore, jobs: Jobs, eid: str, minutes: int,
    ev: TrainingJobDescription,
) -> str:  # fmt: skip
    at = T0 + timedelta(minutes=minutes)
    ledger.clock.advance_to(max(ledger.clock.now(), at))
    return record_training_event(ledger.deps, store, jobs, event_id=eid, at=at, described=ev).result


def test_training_job_accrues_live_then_bills_describe_training_jobs_figures() -> None:
    ledger = sagemaker_ledger()
    store, jobs = TrainingStore(ledger.table), Jobs()
    assert send(ledger, store, jobs, "a1", 0, event("InProgress")) == "applied"
    at = T0 + timedelta(minutes=90)
    live = ledger.job("llama-sft-spot", at)
    assert live.status == "running"
    assert live.instance_usd == Decimal(5400 * 2) * RATE / 3600  # 74.16, an estimate
    assert live.ml_storage_usd == Decimal("0.35")
    assert jobs.calls == 0  # no DescribeTrainingJob while it runs
    send(ledger, store, jobs, "a4", 181, event("Stopped", end=True))
    done = ledger.job("llama-sft-spot", T0 + timedelta(days=1))
    assert done.status == "stopped"
    assert done.instance_usd == Decimal("59.328")
    assert done.ml_storage_usd == Decimal("0.7") and done.warm_pool_usd == 0
    assert done.total_usd == Decimal("60.028")
    assert done.billed_seconds == 8640 and done.managed_spot_saving == Decimal("0.6")
    assert jobs.calls == 1


def test_out_of_order_duplicates_and_a_final_terminal_status() -> None:
    ledger = sagemaker_ledger()
    store, jobs = TrainingStore(ledger.table), Jobs()
    send(ledger, store, jobs, "a4", 181, event("Stopped", end=True))  # the end arrives first
    assert send(ledger, store, jobs, "a4", 181, event("Stopped", end=True)) == "duplicate"
    # a late InProgress only moves the job's first event earlier: it reopens nothing
    assert send(ledger, store, jobs, "a2", 1, event("InProgress")) == "applied"
    before = dict(ledger.table.items)
    assert send(ledger, store, jobs, "a3", 179, event("Stopping")) == "duplicate"
    assert send(ledger, store, jobs, "a2", 1, event("InProgress")) == "duplicate"
    assert ledger.table.items == before  # nothing written
    cost = ledger.job("llama-sft-spot", T0 + timedelta(days=1))
    assert cost.status == "stopped" and cost.total_usd == Decimal("60.028")
    assert jobs.calls == 1


def test_unknown_rate_is_unpriced_never_zero_and_named() -> None:
    ledger = sagemaker_ledger(rate=False)
    store, jobs = TrainingStore(ledger.table), Jobs()
    send(ledger, store, jobs, "a1", 0, event("InProgress"))
    cost = ledger.job("llama-sft-spot", T0 + timedelta(hours=1))
    assert not cost.complete
    assert "sagemaker:ml.trn1.32xlarge:us-east-1" in cost.unpriced
    assert any(u.startswith("unpriced:sagemaker:") for u in cost.unconfirmed)


def test_a_job_sagemaker_cannot_describe_keeps_its_estimate_with_a_warning() -> None:
    ledger = sagemaker_ledger()
    store, jobs = TrainingStore(ledger.table), Jobs(billable=None)
    send(ledger, store, jobs, "a4", 181, event("Stopped", end=True))
    head = store.head("llama-sft-spot", ACCOUNT, "llama-sft-spot-a")
    assert head is not None and not head.billed and head.warnings
    cost = ledger.job("llama-sft-spot", T0 + timedelta(days=1))
    assert cost.instance_usd == Decimal(3 * 3600 * 2) * RATE / 3600  # to its end, unbilled


# -- capacity blocks --------------------------------------------------------------------------
BLOCK = CapacityReservation(
    reservation_id="cr-0b1c000000000000b", kind="capacity-block", instance_type="p5.48xlarge",
    instance_count=4, start=datetime(2026, 11, 10, 11, 30, tzinfo=UTC),
    end=datetime(2026, 11, 12, 11, 30, tzinfo=UTC), account=ACCOUNT,
)  # fmt: skip
IN_BLOCK = InstanceProfile(
    instance_id="i-0a000000000000001", instance_type="p5.48xlarge", region=REGION,
    account=ACCOUNT, lifecycle="capacity-block", capacity_reservation_id=BLOCK.reservation_id,
    tags={"training-job": "p5-pretrain"},
)  # fmt: skip


class Reservations:
    def describe(self, reservation_id: str) -> CapacityReservation:
        return BLOCK

    def list_live(self) -> list[CapacityReservation]:
        return [BLOCK]


def block_ledger(fee: Decimal | None) -> Ledger:
    config = LedgerConfig(
        live_prices=False,
        prices=PriceOverrides(ec2={"p5.48xlarge": Decimal("55.04")}),
        reservations=ReservationConfig(fees={BLOCK.reservation_id: fee} if fee else {}),
    )
    ledger = memory_ledger(IN_BLOCK, config=config, now=BLOCK.start)
    reservations = ReservationLedger(
        ReservationStore(ledger.table), Reservations, config, ledger.deps.prices
    )
    ledger.deps.prices.block_pin = reservations.pin_for
    ledger.deps = dataclasses.replace(ledger.deps, reservations=reservations)
    return ledger


def state(ledger: Ledger, eid: str, at: datetime, st: str) -> None:
    ledger.clock.advance_to(max(ledger.clock.now(), at))
    record_state_change(
        ledger.deps, event_id=eid, at=at, instance_id=IN_BLOCK.instance_id, state=st,
        region=REGION, account=ACCOUNT,
    )  # fmt: skip


def test_a_block_instance_costs_its_share_per_second_with_no_minimum() -> None:
    ledger = block_ledger(Decimal(6000))
    start = datetime(2026, 11, 10, 12, 0, tzinfo=UTC)
    state(ledger, "r", start, "running")
    state(ledger, "s", start + timedelta(seconds=30), "stopped")
    cost = ledger.job("p5-pretrain", start + timedelta(hours=1))
    share = Decimal(6000) / Decimal(4 * 48 * 3600)  # per instance-second
    assert cost.billed_seconds == 30  # no 60 s minimum
    assert cost.instance_usd == share * 30  # not the on-demand $55.04/h
    # the rest of the block's time so far is unused, on reservation:<id>
    wasted = ledger.job("reservation:cr-0b1c000000000000b", start + timedelta(hours=1))
    reserved = 4 * whole(BLOCK.start, start + timedelta(hours=1))
    assert wasted.wasted_reserved_usd == share * (reserved - 30)
    assert wasted.status == "running" and wasted.total_usd == wasted.wasted_reserved_usd
    after = ledger.job("reservation:cr-0b1c000000000000b", datetime(2026, 11, 20, tzinfo=UTC))
    assert after.wasted_reserved_usd == Decimal(6000) - share * 30  # stops at the block's end
    assert after.status == "complete"


def test_a_block_whose_fee_is_unknown_is_unpriced_never_on_demand() -> None:
    ledger = block_ledger(None)
    start = datetime(2026, 11, 10, 12, 0, tzinfo=UTC)
    state(ledger, "r", start, "running")
    cost = ledger.job("p5-pretrain", start + timedelta(hours=1))
    assert cost.instance_usd == 0 and not cost.complete
    wasted = ledger.job("reservation:cr-0b1c000000000000b", start + timedelta(hours=1))
    assert not wasted.complete and wasted.wasted_reserved_usd == 0
    span = Span(start=start, end=None, start_event_id="x")
    ledger.deps.prices.block_pin = None
    assert ledger.deps.prices.pin_for(IN_BLOCK, span) is None


def whole(a: datetime, b: datetime) -> int:
    return int((b - a).total_seconds())


def test_describe_instances_capacity_block_lifecycle_becomes_the_profile() -> None:
    ec2 = boto3.client("ec2", region_name=REGION, aws_access_key_id="x", aws_secret_access_key="x")
    response = {
        "Reservations": [
            {
                "OwnerId": ACCOUNT,
                "Instances": [
                    {
                        "InstanceId": "i-0a000000000000001",
                        "InstanceType": "p5.48xlarge",
                        "InstanceLifecycle": "capacity-block",
                        "CapacityReservationId": "cr-0b1c000000000000b",
                        "Placement": {"AvailabilityZone": "us-east-1a"},
                        "PlatformDetails": "Linux/UNIX",
                        "Tags": [{"Key": "training-job", "Value": "p5-pretrain"}],
                    }
                ],
            }
        ]
    }
    with Stubber(ec2) as stub:
        stub.add_response("describe_instances", response, {"InstanceIds": ["i-0a000000000000001"]})
        profile = Ec2Inventory(ec2).describe("i-0a000000000000001", REGION)
        stub.assert_no_pending_responses()
    assert profile.lifecycle == "capacity-block"
    assert profile.capacity_reservation_id == "cr-0b1c000000000000b"
    assert profile.tags == {"training-job": "p5-pretrain"}


def test_the_daily_refresh_closes_an_ended_block_and_keeps_its_figures() -> None:
    from costtracker.fakes.twins import RecordingNotifier
    from shared.domain import accrual as acc
    from shared.services.reservation_schedule import refresh_reservations

    ledger = block_ledger(Decimal(6000))
    start = datetime(2026, 11, 10, 12, 0, tzinfo=UTC)
    state(ledger, "r", start, "running")  # still running when the block ends
    job = "reservation:cr-0b1c000000000000b"
    later = datetime(2026, 11, 13, 0, 20, tzinfo=UTC)
    before = ledger.job(job, later).wasted_reserved_usd
    ledger.clock.advance_to(later)
    notifier = RecordingNotifier()
    refresh_reservations(
        ledger.deps, Reservations(), notifier, later, account=ACCOUNT, region=REGION
    )
    rollups = ledger.deps.rollups.of_job(job)
    assert not acc.total(acc.from_attributes(r) for r in rollups).is_open()
    assert ledger.job(job, later + timedelta(days=30)).wasted_reserved_usd == before
    # 11-12: one of four instances ran 11.5 h of 11.5 -> 25 % used, above 20 %: no alert
    assert notifier.sent == []
