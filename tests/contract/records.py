"""Small domain records for the contract cases."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from shared.domain.base import Rate, RateSource
from shared.domain.managed.models import CapacityReservation
from shared.domain.managed.reservation import ReservationHead
from shared.domain.managed.training import TrainingHead

ACCOUNT = "123456789012"
AT = datetime(2026, 11, 1, tzinfo=UTC)


def rate(usd: Decimal) -> Rate:
    return Rate(
        list_usd=usd,
        effective_usd=usd,
        source=RateSource.OVERRIDE,
        checked_on=date(2026, 11, 1),
        region="us-east-1",
    )


def training_head(usd: Decimal | None) -> TrainingHead:
    return TrainingHead(
        job_id="llama",
        account=ACCOUNT,
        region="us-east-1",
        name="llama-train-1",
        status="InProgress",
        status_at=AT,
        instance_type="ml.p4d.24xlarge",
        instance_count=2,
        volume_gb=100,
        rate=None if usd is None else rate(usd),
        first_event_at=AT,
    )


def reservation_head(reservation_id: str) -> ReservationHead:
    reservation = CapacityReservation(
        reservation_id=f"{reservation_id}0000000a",
        kind="capacity-block",
        instance_type="p5.48xlarge",
        instance_count=1,
        start=AT,
        end=AT + timedelta(days=1),
        account=ACCOUNT,
    )
    return ReservationHead(reservation=reservation, job_id="llama", region="us-east-1")
