"""EC2 StopInstances, one instance at a time, and what EC2 says of an instance just before
(its state and its tags now, not those cached when the ledger first saw it).

Takes a ``ClientFactory`` (``shared.adapters.accounts``) so that an instance is read and
stopped in its own account and region; a plain EC2 client serves every one as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from shared.adapters.accounts import factory_of


@dataclass(frozen=True)
class InstanceNow:
    """What DescribeInstances says of an instance at this moment."""

    state: str
    tags: dict[str, str]


class Ec2InstanceStops:
    def __init__(self, ec2: Any) -> None:
        self._clients = factory_of(ec2)

    def current(self, instance_id: str, region: str, account: str = "") -> InstanceNow | None:
        """The instance's state and tags now; None when EC2 no longer knows it."""
        ec2 = self._clients.client_for("ec2", account, region)
        try:
            response = ec2.describe_instances(InstanceIds=[instance_id])
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "InvalidInstanceID.NotFound":
                return None
            raise
        for reservation in response.get("Reservations", []):
            for instance in reservation.get("Instances", []):
                return InstanceNow(
                    state=str(instance.get("State", {}).get("Name", "")),
                    tags={t["Key"]: t["Value"] for t in instance.get("Tags", [])},
                )
        return None

    def stop(self, instance_id: str, region: str, account: str = "") -> None:
        ec2 = self._clients.client_for("ec2", account, region)
        ec2.stop_instances(InstanceIds=[instance_id])
