"""In-memory twins of the AWS-facing interfaces other than the ledger table, for unit
tests (no network). Every record of the ledger table is kept by the real stores over the
in-memory table (``tests.support.memory_ledger``)."""

from __future__ import annotations

from shared.domain.instance import InstanceProfile
from shared.inventory import InstanceNotFound
from shared.notify import Alert


class FakeInventory:
    """DescribeInstances twin: the given profiles; any other instance is not found."""

    def __init__(self, *profiles: InstanceProfile) -> None:
        self.profiles = {p.instance_id: p for p in profiles}
        self.calls = 0

    def describe(self, instance_id: str, region: str, account: str = "") -> InstanceProfile:
        self.calls += 1
        if instance_id not in self.profiles:
            raise InstanceNotFound(instance_id)
        return self.profiles[instance_id]


class RecordingNotifier:
    def __init__(self) -> None:
        self.sent: list[Alert] = []

    def send(self, alert: Alert) -> None:
        self.sent.append(alert)
