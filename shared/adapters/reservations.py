"""Capacity Blocks for ML and On-Demand Capacity Reservations: ``CapacityReservations`` over
DescribeCapacityReservations, and which reservation an instance runs in (DescribeInstances).

Reservations are learnt when an instance in one is first seen (``describe``) and refreshed on a
daily schedule (``reservations_to_refresh``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any, Protocol

from botocore.exceptions import ClientError

from shared.adapters.accounts import factory_of
from shared.domain.managed.models import (
    LIVE_RESERVATION_STATES,
    CapacityReservation,
    InstanceReservationRef,
)

_NOT_FOUND_CODES = {
    "InvalidCapacityReservationId.NotFound",
    "InvalidCapacityReservationId.Malformed",
}
# A reservation that ended is refreshed for one more day (late state changes, the final count).
REFRESH_AFTER_END = timedelta(days=1)


class ReservationNotFound(Exception):
    """EC2 does not know the reservation (another account, region, or a malformed id)."""

    def __init__(self, reservation_id: str, reason: str = "not found") -> None:
        super().__init__(f"capacity reservation {reservation_id!r}: {reason}")
        self.reservation_id = reservation_id


class CapacityReservations(Protocol):
    def describe(
        self, reservation_id: str, *, account: str = "", region: str = ""
    ) -> CapacityReservation:
        """One reservation as EC2 describes it now in ``account`` and ``region`` (empty:
        the tracker's own); raises ``ReservationNotFound``."""
        ...

    def list_live(self, *, account: str = "", region: str = "") -> list[CapacityReservation]:
        """Every reservation of the account and region in a state that is (or will be) paid
        for (``LIVE_RESERVATION_STATES``), all pages."""
        ...


def reservation_of(item: Mapping[str, Any]) -> CapacityReservation:
    """One ``CapacityReservations`` item of the API (boto3's parsed dict) as a model."""
    return CapacityReservation(
        reservation_id=item["CapacityReservationId"],
        kind="capacity-block" if item.get("ReservationType") == "capacity-block" else "odcr",
        instance_type=item.get("InstanceType") or "unknown",
        instance_count=int(item.get("TotalInstanceCount") or 0),
        start=item["StartDate"],
        end=item.get("EndDate"),
        state=item.get("State", "active"),
        tags={t["Key"]: t.get("Value", "") for t in item.get("Tags", [])},
        availability_zone=item.get("AvailabilityZone", ""),
        account=item.get("OwnerId", ""),
        instance_platform=item.get("InstancePlatform") or "Linux/UNIX",
    )


def reservation_ref_of(instance: Mapping[str, Any]) -> InstanceReservationRef | None:
    """Which reservation a DescribeInstances instance runs in, if any: ``InstanceLifecycle``
    ``capacity-block`` with ``CapacityReservationId`` is a Capacity Block; a
    ``CapacityReservationId`` alone is an ODCR."""
    reservation_id = instance.get("CapacityReservationId")
    if not reservation_id:
        return None
    return InstanceReservationRef(
        instance_id=instance["InstanceId"],
        reservation_id=reservation_id,
        capacity_block=instance.get("InstanceLifecycle") == "capacity-block",
    )


class Ec2CapacityReservations:
    """``CapacityReservations`` over a boto3 EC2 client, or over a ``ClientFactory``
    (``shared.adapters.accounts``) for the reservations of ``account`` in ``region``
    (empty: the tracker's own; a member account is read through its read-only role)."""

    def __init__(self, ec2: Any, *, account: str = "", region: str = "") -> None:
        self._clients = factory_of(ec2)
        self._account = account
        self._region = region

    @property
    def _ec2(self) -> Any:
        return self._clients.client_for("ec2", self._account, self._region)

    def _ec2_in(self, account: str, region: str) -> Any:
        return self._clients.client_for("ec2", account or self._account, region or self._region)

    def describe(
        self, reservation_id: str, *, account: str = "", region: str = ""
    ) -> CapacityReservation:
        try:
            response = self._ec2_in(account, region).describe_capacity_reservations(
                CapacityReservationIds=[reservation_id]
            )
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code in _NOT_FOUND_CODES:
                raise ReservationNotFound(reservation_id, code) from exc
            raise
        for item in response.get("CapacityReservations", []):
            if item.get("CapacityReservationId") == reservation_id:
                return reservation_of(item)
        raise ReservationNotFound(reservation_id)

    def list_live(self, *, account: str = "", region: str = "") -> list[CapacityReservation]:
        ec2 = self._ec2_in(account, region)
        pages = ec2.get_paginator("describe_capacity_reservations").paginate(
            Filters=[{"Name": "state", "Values": sorted(LIVE_RESERVATION_STATES)}]
        )
        return [
            reservation_of(item) for page in pages for item in page.get("CapacityReservations", [])
        ]

    def instance_reservation(self, instance_id: str) -> InstanceReservationRef | None:
        """The reservation an instance runs in (DescribeInstances), None if none or unknown."""
        try:
            response = self._ec2.describe_instances(InstanceIds=[instance_id])
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "InvalidInstanceID.NotFound":
                return None
            raise
        for reservation in response.get("Reservations", []):
            for instance in reservation.get("Instances", []):
                return reservation_ref_of(instance)
        return None


def needs_refresh(reservation: CapacityReservation, now: datetime) -> bool:
    """A known reservation is refreshed while live, and for a day after its end."""
    if reservation.state in LIVE_RESERVATION_STATES:
        return True
    return reservation.end is not None and now - reservation.end <= REFRESH_AFTER_END


def reservations_to_refresh(
    source: CapacityReservations,
    known: Iterable[CapacityReservation],
    now: datetime,
    *,
    account: str = "",
    region: str = "",
) -> tuple[list[CapacityReservation], list[str]]:
    """The daily refresh of one account and region (``known``: the reservations known
    there): every live reservation EC2 lists there, plus each known one that still
    ``needs_refresh`` (described again by id), newest view of each, sorted by id. Also
    returns the ids EC2 no longer knows (to be reported, never silently dropped)."""
    fresh: dict[str, CapacityReservation] = {
        r.reservation_id: r for r in source.list_live(account=account, region=region)
    }
    gone: list[str] = []
    for reservation in known:
        if reservation.reservation_id in fresh or not needs_refresh(reservation, now):
            continue
        try:
            fresh[reservation.reservation_id] = source.describe(
                reservation.reservation_id, account=account, region=region
            )
        except ReservationNotFound:
            gone.append(reservation.reservation_id)
    return [fresh[k] for k in sorted(fresh)], sorted(gone)
