"""The one stopper (shared.services.stopper): each instance on its own, its tags read again
just before the stop, a failure reported and never raised."""

from __future__ import annotations

import logging

import pytest
from botocore.exceptions import ClientError

from shared.adapters.instance_stops import InstanceNow
from shared.services.stopper import Stopper, StopRequest

OPT_IN = "costtracker:auto-stop"


class Ec2Now:
    """EC2 as it is now: per instance its state and tags; StopInstances may refuse one."""

    def __init__(self, instances: dict[str, InstanceNow | None], refuse: str = "") -> None:
        self.instances = instances
        self.refuse = refuse
        self.reads: list[str] = []
        self.stopped: list[str] = []

    def current(self, instance_id: str, region: str, account: str = "") -> InstanceNow | None:
        self.reads.append(instance_id)
        return self.instances[instance_id]

    def stop(self, instance_id: str, region: str, account: str = "") -> None:
        if instance_id == self.refuse:
            raise ClientError(
                {"Error": {"Code": "IncorrectInstanceState", "Message": "x"}}, "StopInstances"
            )
        self.stopped.append(instance_id)


def running(**tags: str) -> InstanceNow:
    return InstanceNow("running", dict(tags))


def test_each_stop_is_its_own_and_a_failure_is_reported_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ec2 = Ec2Now(
        {
            "i-0a": running(**{OPT_IN: "true"}),
            "i-0b": running(**{OPT_IN: "true"}),
            "i-0c": running(**{OPT_IN: "false"}),
            "i-0d": InstanceNow("stopped", {OPT_IN: "true"}),
            "i-0e": None,
            "i-0f": running(**{OPT_IN: "true"}),
        },
        refuse="i-0a",
    )
    stopper = Stopper(ec2, OPT_IN)
    with caplog.at_level(logging.ERROR, logger="costtracker.stopper"):
        outcomes = stopper.stop_each(
            StopRequest(iid, "us-east-1", "123456789012") for iid in sorted(ec2.instances)
        )
    assert [(o.instance_id, o.result) for o in outcomes] == [
        ("i-0a", "stop_failed"),
        ("i-0b", "stopped"),
        ("i-0c", "opted_out"),
        ("i-0d", "not_running"),
        ("i-0e", "not_running"),
        ("i-0f", "stopped"),
    ]
    assert "IncorrectInstanceState" in outcomes[0].detail
    assert ec2.stopped == ["i-0b", "i-0f"]
    assert ec2.reads == sorted(ec2.instances)  # every instance read just before its stop
    assert any(getattr(r, "instance_id", "") == "i-0a" for r in caplog.records)


def test_a_failed_read_is_a_failed_stop_of_that_instance_only() -> None:
    class Throttled(Ec2Now):
        def current(self, instance_id: str, region: str, account: str = "") -> InstanceNow | None:
            if instance_id == "i-0a":
                raise ClientError({"Error": {"Code": "RequestLimitExceeded"}}, "DescribeInstances")
            return super().current(instance_id, region, account)

    ec2 = Throttled({"i-0a": running(), "i-0b": running(**{OPT_IN: "true"})})
    outcomes = Stopper(ec2, OPT_IN).stop_each(
        [StopRequest("i-0a", "us-east-1"), StopRequest("i-0b", "us-east-1")]
    )
    assert [o.result for o in outcomes] == ["stop_failed", "stopped"]
