"""What the deployed functions do for an instance of a member account, they do in that
account and region, through its role (moto keeps each account's resources apart and
maps assumed-role keys to the role's account): its alarms are put and deleted there, and
an idle instance is stopped there, never through the tracker's own client."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import boto3
import pytest
from moto import mock_aws

from shared.app import runtime
from shared.domain.clock import FixedClock
from shared.services.stopper import StopRequest
from tests.aws_events import ec2_state_event
from tests.integration.test_alerts_guarantees import (
    CONFIG,
    T0,
    TABLE,
    alarm_event,
    checkpoint_object,
    deliver,
    stamp,
    sweep,
)
from tests.support import alarm_name, moto_instance, moto_ledger

MEMBER, REGION = "222222222222", "eu-west-1"
OPT_IN = "costtracker:auto-stop"


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """A trn1.32xlarge of the member account in eu-west-1, opted in to auto-stop."""
    with mock_aws():
        moto_ledger(monkeypatch, TABLE, CONFIG.model_dump_json())
        clock = FixedClock(T0)
        with runtime.override(clock) as rt:
            ec2 = rt.accounts.client_for("ec2", MEMBER, REGION)
            tags = {"training-job": "eu-run", OPT_IN: "true"}
            iid = moto_instance(ec2, "trn1.32xlarge", tags)
            yield {"rt": rt, "iid": iid, "ec2": ec2, "clock": clock}


def running(world: dict[str, Any], state: str = "running", minutes: int = 0) -> dict[str, Any]:
    at = stamp(T0 + timedelta(minutes=minutes))
    iid = world["iid"]
    return ec2_state_event(f"{iid}-{state}", iid, state, at, account=MEMBER, region=REGION)


def alarm_names(world: dict[str, Any], account: str, region: str) -> list[str]:
    cloudwatch = world["rt"].accounts.client_for("cloudwatch", account, region)
    return sorted(a["AlarmName"] for a in cloudwatch.describe_alarms()["MetricAlarms"])


def test_member_instance_alarms_are_put_and_deleted_in_its_account(world: dict[str, Any]) -> None:
    iid, home = world["iid"], world["rt"].accounts.home_account
    deliver(world, "instance_state", running(world))
    deliver(world, "alarm_lifecycle", running(world))
    ours = [f"costtracker-{iid}-accelerator-low", f"costtracker-{iid}-cpu-low"]
    assert alarm_names(world, MEMBER, REGION) == ours
    # Not in the tracker's account, where the instance's metrics are not.
    assert alarm_names(world, home, "us-east-1") == []
    assert alarm_names(world, home, REGION) == []
    deliver(world, "instance_state", running(world, "stopped", 30))
    deliver(world, "alarm_lifecycle", running(world, "stopped", 30))
    assert alarm_names(world, MEMBER, REGION) == ours  # retired: the sweep deletes them
    assert sweep(world, 60)["retired_deleted"] == 2
    assert alarm_names(world, MEMBER, REGION) == []


def test_member_instance_is_stopped_in_its_account(world: dict[str, Any]) -> None:
    iid = world["iid"]
    outcome = world["rt"].stopper.stop(StopRequest(iid, REGION, MEMBER))
    assert (outcome.result, outcome.detail) == ("stopped", "")
    found = world["ec2"].describe_instances(InstanceIds=[iid])["Reservations"][0]["Instances"]
    assert found[0]["State"]["Name"] in ("stopping", "stopped")


def test_alarms_named_like_the_tracker_s_for_a_cpu_node_never_stop_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A job's c5.24xlarge node, opted in: the tracker puts no alarms for it, so two
    alarms someone made under the tracker's names (on CPU metrics, in ALARM) neither make
    it idle nor stop it, even with a complete checkpoint after them."""
    with mock_aws():
        moto_ledger(monkeypatch, TABLE, CONFIG.model_dump_json())
        ec2 = boto3.client("ec2", region_name="us-east-1")
        tags = {"training-job": "llama", OPT_IN: "true"}
        iid = moto_instance(ec2, "c5.24xlarge", tags)
        with runtime.override(FixedClock(T0)) as rt:
            world = {"clock": rt.clock, "iid": iid}
            start = ec2_state_event(f"{iid}-run", iid, "running", stamp(T0))
            deliver(world, "instance_state", start)
            deliver(world, "alarm_lifecycle", start)
            for minute, signal in ((10, "accelerator"), (11, "cpu")):
                event = alarm_event(alarm_name(iid, signal), "ALARM", minute, iid)
                assert deliver(world, "alarm_state", event)["result"] == "ignored"
            deliver(world, "checkpoint", checkpoint_object("runs/llama/step-20/shard.pt", 20))
            deliver(world, "checkpoint", checkpoint_object("runs/llama/step-20/_COMPLETE", 21))
            assert sweep(world, 30)["auto_stop"] == {}
        state = ec2.describe_instances(InstanceIds=[iid])["Reservations"][0]["Instances"][0]
        assert state["State"]["Name"] == "running"
