"""In-memory twins of the AWS-facing interfaces other than the ledger table, for the unit
tests and the benchmarks (no network). Every record of the ledger table is kept by the
real stores over the in-memory table (``tests.support.memory_ledger``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from shared.adapters.inventory import Ec2State, InstanceNotFound
from shared.adapters.notify import Alert
from shared.domain.instance import InstanceProfile


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


class FakeFleet(FakeInventory):
    """EC2 for the sweep as well: what ``Ec2Inventory.states`` and ``running`` say now.
    ``now_states`` maps an instance to (state, when it last changed); an instance with no
    entry is unknown to EC2 (terminated long ago)."""

    def __init__(self, *profiles: InstanceProfile) -> None:
        super().__init__(*profiles)
        self.now_states: dict[str, tuple[str, datetime | None]] = {}
        self.launched: dict[str, datetime] = {}

    def states(self, instance_ids: list[str]) -> dict[str, Ec2State]:
        found: dict[str, Ec2State] = {}
        for iid in instance_ids:
            if iid in self.now_states:
                state, changed_at = self.now_states[iid]
                account = self.profiles[iid].account
                found[iid] = Ec2State(iid, state, self.launched.get(iid), changed_at, account)
        return found

    def running(self, region: str) -> list[tuple[Ec2State, Callable[[], InstanceProfile]]]:
        found = self.states(sorted(self.now_states))
        return [
            (state, lambda p=self.profiles[iid]: p)  # type: ignore[misc]
            for iid, state in found.items()
            if state.state == "running" and self.profiles[iid].region == region
        ]
