"""Instance facts the events do not carry (type, lifecycle, platform, tags, volumes).

Asked once per instance and cached with its record in the ledger.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any, Protocol

from botocore.exceptions import ClientError

from shared.adapters.accounts import factory_of
from shared.domain.ebs import Volume
from shared.domain.instance import InstanceProfile


class InstanceNotFound(Exception):
    """EC2 does not (yet) know the instance: the API is eventually consistent, retry later."""


class Inventory(Protocol):
    def describe(self, instance_id: str, region: str, account: str = "") -> InstanceProfile: ...


@dataclass(frozen=True)
class Ec2State:
    """What EC2 says of an instance now, for the sweep that catches missed events."""

    instance_id: str
    state: str
    launch_time: datetime | None
    # When it last stopped, from StateTransitionReason ("User initiated (... GMT)").
    changed_at: datetime | None
    account: str = ""
    tags: Mapping[str, str] = field(default_factory=dict)


_REASON_TIME = re.compile(r"\((\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}) (?:GMT|UTC)\)")


def _state_of(instance: dict[str, Any], account: str = "") -> Ec2State:
    match = _REASON_TIME.search(instance.get("StateTransitionReason") or "")
    changed = datetime.strptime(match.group(1) + "+0000", "%Y-%m-%d %H:%M:%S%z") if match else None
    launch = instance.get("LaunchTime")
    return Ec2State(
        instance_id=instance["InstanceId"],
        state=instance.get("State", {}).get("Name", ""),
        launch_time=launch.astimezone(UTC) if isinstance(launch, datetime) else None,
        changed_at=changed,
        account=account,
        tags={t["Key"]: t["Value"] for t in instance.get("Tags", [])},
    )


def _lifecycle(value: str | None) -> Any:
    return value if value in ("spot", "capacity-block") else "on-demand"


class Ec2Inventory:
    """``Inventory`` over DescribeInstances (+ DescribeVolumes for sizes and types).

    Takes a ``ClientFactory`` (``shared.adapters.accounts``): an instance is described in
    its event's account and region (a member account through its read-only role). A plain
    EC2 client serves every account and region as it is. ``page`` and ``states`` (the
    sweep) read the account and region they are given."""

    def __init__(self, ec2: Any, region: str = "") -> None:
        self._clients = factory_of(ec2)
        self._home_region = region

    @property
    def _ec2(self) -> Any:
        return self._clients.client_for("ec2", "", self._home_region)

    def describe(self, instance_id: str, region: str, account: str = "") -> InstanceProfile:
        ec2 = self._clients.client_for("ec2", account, region)
        try:
            response = ec2.describe_instances(InstanceIds=[instance_id])
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "InvalidInstanceID.NotFound":
                raise InstanceNotFound(instance_id) from exc
            raise
        found = [
            (r.get("OwnerId", ""), i)
            for r in response.get("Reservations", [])
            for i in r.get("Instances", [])
        ]
        if not found:
            raise InstanceNotFound(instance_id)
        owner, instance = found[0]
        return self._profile(instance_id, instance, owner, region, ec2)

    def _profile(
        self,
        instance_id: str,
        instance: dict[str, Any],
        account: str,
        region: str,
        ec2: Any = None,
    ) -> InstanceProfile:
        volume_ids = [
            m["Ebs"]["VolumeId"]
            for m in instance.get("BlockDeviceMappings", [])
            if "Ebs" in m and "VolumeId" in m["Ebs"]
        ]
        volumes: list[Volume] = []
        if volume_ids:
            volumes_of = (ec2 or self._ec2).describe_volumes(VolumeIds=volume_ids)
            for volume in volumes_of.get("Volumes", []):
                volumes.append(
                    Volume(
                        volume_id=volume["VolumeId"],
                        size_gib=int(volume["Size"]),
                        volume_type=volume.get("VolumeType", "gp3"),
                        iops=volume.get("Iops"),
                        throughput=volume.get("Throughput"),
                    )
                )
        return InstanceProfile(
            instance_id=instance_id,
            instance_type=instance["InstanceType"],
            region=region,
            account=account,
            availability_zone=instance.get("Placement", {}).get("AvailabilityZone", ""),
            lifecycle=_lifecycle(instance.get("InstanceLifecycle")),
            capacity_reservation_id=instance.get("CapacityReservationId", ""),
            platform=instance.get("PlatformDetails") or "Linux/UNIX",
            tags={t["Key"]: t["Value"] for t in instance.get("Tags", [])},
            volumes=tuple(sorted(volumes, key=lambda v: v.volume_id)),
        )

    def states(
        self, instance_ids: list[str], account: str = "", region: str = ""
    ) -> dict[str, Ec2State]:
        """EC2's view of these instances (absent: EC2 no longer knows them), in
        ``account`` and ``region`` (empty: the tracker's own)."""
        found: dict[str, Ec2State] = {}
        ec2 = self._clients.client_for("ec2", account, region or self._home_region)
        for start in range(0, len(instance_ids), 200):
            batch = instance_ids[start : start + 200]
            try:
                pages = ec2.get_paginator("describe_instances").paginate(
                    Filters=[{"Name": "instance-id", "Values": batch}]
                )
                for page in pages:
                    for reservation in page.get("Reservations", []):
                        for instance in reservation.get("Instances", []):
                            found[instance["InstanceId"]] = _state_of(instance)
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") != "InvalidInstanceID.NotFound":
                    raise
        return found

    def page(
        self, account: str, region: str, token: str | None, size: int
    ) -> tuple[list[tuple[Ec2State, Callable[[], InstanceProfile]]], str | None]:
        """One DescribeInstances page (at most ``size`` instances, every state) of
        ``account`` in ``region``, and the token of the next page (None: the last)."""
        ec2 = self._clients.client_for("ec2", account, region)
        request: dict[str, Any] = {"MaxResults": size}
        if token:
            request["NextToken"] = token
        response = ec2.describe_instances(**request)
        out: list[tuple[Ec2State, Callable[[], InstanceProfile]]] = []
        for reservation in response.get("Reservations", []):
            owner = reservation.get("OwnerId", "") or account
            for instance in reservation.get("Instances", []):
                profile = partial(
                    self._profile, instance["InstanceId"], instance, owner, region, ec2
                )
                out.append((_state_of(instance, owner), profile))
        return out, response.get("NextToken") or None
