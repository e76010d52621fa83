"""The auto-stop sweep through the deployed handlers against moto EC2: each idle, opted-in
instance is stopped on its own, its tags read again just before the stop.

Four idle instances of one job, each with a complete checkpoint newer than its idle start:
- ``opted_out``: its opt-in tag was removed after the ledger first saw it -> not stopped;
- ``gone``: stopped by someone else before the sweep -> left alone;
- ``failing``: StopInstances refuses it (a botocore before-call hook) -> reported;
- ``ok``: stopped, although the three others came first.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from shared.app import runtime
from shared.domain.clock import FixedClock
from tests.aws_events import TRACKER_METRICS
from tests.integration.test_alerts_guarantees import (
    CONFIG,
    T0,
    TABLE,
    alarm_event,
    checkpoint_object,
    deliver,
    state_event,
    sweep,
)
from tests.support import alarm_name, moto_instance, moto_ledger

OPT_IN = "costtracker:auto-stop"
NAMES = ("opted_out", "gone", "failing", "ok")


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    with mock_aws():
        moto_ledger(monkeypatch, TABLE, CONFIG.model_dump_json())
        ec2 = boto3.client("ec2", region_name="us-east-1")
        tags = {"training-job": "llama", "team": "nlp", OPT_IN: "true"}
        ids = {}
        for name in NAMES:
            ids[name] = moto_instance(ec2, "trn1.32xlarge", tags)
        clock = FixedClock(T0)
        with runtime.override(clock):
            world = {"ids": ids, "clock": clock, "ec2": ec2}
            for n, iid in enumerate(ids.values()):
                deliver(world, "instance_state", state_event(iid, n / 60))
                deliver(world, "alarm_lifecycle", state_event(iid, n / 60))  # the alarms put
            for iid in ids.values():
                for minute, signal in ((10, "accelerator"), (11, "cpu")):
                    metric = TRACKER_METRICS["neuron" if signal == "accelerator" else "cpu"]
                    event = alarm_event(alarm_name(iid, signal), "ALARM", minute, iid, metric)
                    deliver(world, "alarm_state", event)
            deliver(world, "checkpoint", checkpoint_object("runs/llama/step-20/shard.pt", 20))
            deliver(world, "checkpoint", checkpoint_object("runs/llama/step-20/_COMPLETE", 21))
            yield world


def state_of(world: dict[str, Any], iid: str) -> str:
    reservations = world["ec2"].describe_instances(InstanceIds=[iid])["Reservations"]
    return str(reservations[0]["Instances"][0]["State"]["Name"])


def test_each_instance_is_stopped_on_its_own_by_its_tags_now(world: dict[str, Any]) -> None:
    ids, ec2 = world["ids"], world["ec2"]
    ec2.delete_tags(Resources=[ids["opted_out"]], Tags=[{"Key": OPT_IN}])  # opts out
    ec2.stop_instances(InstanceIds=[ids["gone"]])  # someone else stopped it

    def refuse(params: dict[str, Any], **_: Any) -> None:
        if ids["failing"] in params.get("InstanceIds", []):
            raise ClientError(
                {"Error": {"Code": "UnauthorizedOperation", "Message": "no"}}, "StopInstances"
            )

    # The very client the functions' stopper uses (the runtime keeps one per service).
    runtime.client("ec2").meta.events.register("before-parameter-build.ec2.StopInstances", refuse)
    decisions = sweep(world, 30)["auto_stop"]
    assert decisions == {
        ids["opted_out"]: "opted_out",
        ids["gone"]: "not_running",
        ids["failing"]: "stop_failed",
        ids["ok"]: "stopped",
    }
    assert state_of(world, ids["opted_out"]) == "running"
    assert state_of(world, ids["failing"]) == "running"
    assert state_of(world, ids["ok"]) in ("stopping", "stopped")
