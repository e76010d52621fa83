"""Training jobs and reservations are read in their own account and region: a
DescribeTrainingJob answer whose ARN names another account or region is refused (the job
stays an estimate, with a warning), and a reservation is described and refreshed where
it was made."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from shared.adapters.managed_store import ReservationStore
from shared.config.ledger import LedgerConfig, PriceOverrides
from shared.domain.managed.models import CapacityReservation, TrainingJobDescription
from shared.domain.managed.training import merge, with_billing
from shared.services.reservation_schedule import refresh_reservations
from shared.services.reservations import ReservationLedger
from tests.support import ACCOUNT, REGION, memory_ledger

MEMBER, EU = "222222222222", "eu-west-1"
T0 = datetime(2026, 11, 1, 10, tzinfo=UTC)


def described(account: str, region: str, count: int, billable: int) -> TrainingJobDescription:
    return TrainingJobDescription(
        name="sft-run", status="Completed", instance_type="ml.trn1.32xlarge",
        instance_count=count, volume_size_gb=0, training_start=T0,
        training_end=T0 + timedelta(hours=1), billable_seconds=billable,
        training_seconds=billable, account=account, region=region,
    )  # fmt: skip


def member_head():  # type: ignore[no-untyped-def]
    event = described(MEMBER, "us-east-1", 1, 3600).model_copy(
        update={"billable_seconds": None, "training_seconds": None}
    )
    return merge(None, event, T0 + timedelta(hours=1), "e1", "member-sft")


def test_a_description_of_a_same_named_job_elsewhere_is_refused() -> None:
    head = member_head()
    for account, region in ((ACCOUNT, "us-east-1"), (MEMBER, EU), ("", "")):
        other = with_billing(head, described(account, region, 16, 36000))
        assert not other.billed and other.instance_count == 1
        assert other.billable_seconds is None
        assert "refused" in other.warnings[-1] and "an estimate" in other.warnings[-1]
        assert with_billing(other, described(account, region, 16, 36000)) == other  # once
    own = with_billing(head, described(MEMBER, "us-east-1", 1, 3600))
    assert own.billed and (own.instance_count, own.billable_seconds) == (1, 3600)


class RecordingReservations:
    """``CapacityReservations`` that answers only for the member's eu-west-1 block and
    records where it was asked."""

    def __init__(self, block: CapacityReservation) -> None:
        self.block = block
        self.asked: list[tuple[str, str, str]] = []

    def describe(
        self, reservation_id: str, *, account: str = "", region: str = ""
    ) -> CapacityReservation:
        self.asked.append(("describe", account, region))
        if (account, region) != (MEMBER, EU):
            from shared.adapters.reservations import ReservationNotFound

            raise ReservationNotFound(reservation_id)
        return self.block

    def list_live(self, *, account: str = "", region: str = "") -> list[CapacityReservation]:
        self.asked.append(("list_live", account, region))
        return [self.block] if (account, region) == (MEMBER, EU) else []


def test_a_member_reservation_is_described_and_refreshed_in_its_account() -> None:
    block = CapacityReservation(
        reservation_id="cr-0b1c000000000000b", kind="odcr", instance_type="p5.48xlarge",
        instance_count=1, start=T0, end=T0 + timedelta(days=2), account=MEMBER,
    )  # fmt: skip
    source = RecordingReservations(block)
    config = LedgerConfig(live_prices=False, prices=PriceOverrides(ec2={"p5.48xlarge": "55.04"}))
    ledger = memory_ledger(config=config, now=T0)
    reservations = ReservationLedger(
        ReservationStore(ledger.table), lambda: source, config, ledger.deps.prices
    )
    deps = dataclasses.replace(ledger.deps, reservations=reservations)
    head = reservations.head_for(MEMBER, block.reservation_id, EU)
    assert head is not None and head.account == MEMBER and head.region == EU
    assert source.asked == [("describe", MEMBER, EU)]
    reservations.save(deps.rollups, deps.table, head, T0)
    source.asked.clear()
    result = refresh_reservations(
        deps, source, ledger.notifier, T0 + timedelta(hours=1), account=ACCOUNT, region=REGION
    )
    assert result.refreshed == [block.reservation_id] and result.failed == []
    # The tracker's own account and region, and the member's where the block is.
    assert sorted(source.asked) == [
        ("list_live", ACCOUNT, REGION),
        ("list_live", MEMBER, EU),
    ]
