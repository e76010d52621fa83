"""Instance facts the events do not carry (type, lifecycle, platform, tags, volumes).

Asked once per instance and cached with its record in the ledger.
"""

from __future__ import annotations

from typing import Any, Protocol

from botocore.exceptions import ClientError

from shared.models import InstanceProfile, Volume


class InstanceNotFound(Exception):
    """EC2 does not (yet) know the instance: the API is eventually consistent, retry later."""


class Inventory(Protocol):
    def describe(self, instance_id: str, region: str) -> InstanceProfile: ...


class Ec2Inventory:
    """``Inventory`` over DescribeInstances (+ DescribeVolumes for sizes and types)."""

    def __init__(self, ec2_client: Any) -> None:
        self._ec2 = ec2_client

    def describe(self, instance_id: str, region: str) -> InstanceProfile:
        try:
            response = self._ec2.describe_instances(InstanceIds=[instance_id])
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
        account, instance = found[0]
        volume_ids = [
            m["Ebs"]["VolumeId"]
            for m in instance.get("BlockDeviceMappings", [])
            if "Ebs" in m and "VolumeId" in m["Ebs"]
        ]
        volumes: list[Volume] = []
        if volume_ids:
            for volume in self._ec2.describe_volumes(VolumeIds=volume_ids).get("Volumes", []):
                volumes.append(
                    Volume(
                        volume_id=volume["VolumeId"],
                        size_gib=int(volume["Size"]),
                        volume_type=volume.get("VolumeType", "gp3"),
                    )
                )
        return InstanceProfile(
            instance_id=instance_id,
            instance_type=instance["InstanceType"],
            region=region,
            account=account,
            availability_zone=instance.get("Placement", {}).get("AvailabilityZone", ""),
            lifecycle="spot" if instance.get("InstanceLifecycle") == "spot" else "on-demand",
            platform=instance.get("PlatformDetails") or "Linux/UNIX",
            tags={t["Key"]: t["Value"] for t in instance.get("Tags", [])},
            volumes=tuple(sorted(volumes, key=lambda v: v.volume_id)),
        )
