"""Issue 13's guarantees through the deployed handlers against moto (alarm_state,
checkpoint, alarm_sweep, instance_state; SNS -> SQS standing for the team's mailbox):

- someone else's alarms in ALARM (the real CloudWatch sample `ServerCpuTooHigh`, set on
  our instance, and a "GPU > 90 %" alarm) beside our OK alarms: no idle, no input-bound,
  no stop, although auto-stop is on and a complete checkpoint exists; our own alarms then
  do make it idle and stop it (the test can fail);
- auto-stop: a partially written checkpoint allows no stop, its marker does;
- day 45 after five idle episodes: a routine alarm event sends nothing old and writes as
  few items as after one episode (writes counted at the table adapter).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from costtracker.lambda_context import FakeLambdaContext
from shared.adapters.table import DynamoTable
from shared.app import runtime
from shared.config.ledger import LedgerConfig
from shared.domain.clock import FixedClock
from tests.aws_events import TRACKER_METRICS, ec2_state_event, limit, scheduled_event
from tests.support import alarm_name, moto_instance, moto_ledger

T0 = datetime(2026, 11, 1, 10, tzinfo=UTC)
TABLE = "ledger-guarantees"
EVENTS = Path(__file__).parent.parent / "events"
CONFIG = LedgerConfig.model_validate(
    {
        "live_prices": False,
        "prices": {"ec2": {"trn1.32xlarge": "21.50"}},
        "auto_stop": {"enabled": True, "dry_run": False},
        "checkpoint": {"completion_marker": "_COMPLETE"},
    }
)


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    with mock_aws():
        moto_ledger(monkeypatch, TABLE, CONFIG.model_dump_json())
        sns = boto3.client("sns", region_name="us-east-1")
        sqs = boto3.client("sqs", region_name="us-east-1")
        topic = sns.create_topic(Name="team")["TopicArn"]
        queue = sqs.create_queue(QueueName="team-nlp")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])
        sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn["Attributes"]["QueueArn"])
        ec2 = boto3.client("ec2", region_name="us-east-1")
        tags = {"training-job": "llama", "team": "nlp", "costtracker:auto-stop": "true"}
        iid = moto_instance(ec2, "trn1.32xlarge", tags)
        monkeypatch.setenv("TEAM_TOPIC_ARN", topic)
        clock = FixedClock(T0)
        with runtime.override(clock):
            world = {"iid": iid, "clock": clock, "sqs": sqs, "queue": queue, "ec2": ec2}
            deliver(world, "instance_state", state_event(iid, 0))
            deliver(world, "alarm_lifecycle", state_event(iid, 0))  # the alarms put
            yield world


def stamp(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def deliver(world: dict[str, Any], function: str, event: dict[str, Any]) -> Any:
    import importlib

    world["clock"].advance_to(datetime.fromisoformat(event["time"].replace("Z", "+00:00")))
    handler = importlib.import_module(f"functions.{function}.handler").handler
    return handler(event, FakeLambdaContext("test"))


def state_event(iid: str, minutes: float) -> dict[str, Any]:
    return ec2_state_event(f"run-{iid}", iid, "running", stamp(T0 + timedelta(minutes=minutes)))


SAMPLE = json.loads((EVENTS / "alarm-state-change-single-metric.json").read_text())


def alarm_event(
    name: str,
    state: str,
    minutes: float,
    iid: str,
    metric: tuple[str, str] = ("AWS/EC2", "CPUUtilization"),
) -> dict[str, Any]:
    """The real sample, renamed, on ``iid``'s metric, in ``state`` at T0 + minutes."""
    at = T0 + timedelta(minutes=minutes)
    event = copy.deepcopy(SAMPLE)
    event["id"] = f"{name}-{state}-{minutes}"
    event["time"] = stamp(at)
    event["resources"] = [f"arn:aws:cloudwatch:us-east-1:123456789012:alarm:{name}"]
    detail = event["detail"]
    detail["alarmName"] = name
    (entry,) = detail["configuration"]["metrics"]
    entry["metricStat"]["metric"].update(
        {"dimensions": {"InstanceId": iid}, "namespace": metric[0], "name": metric[1]}
    )
    detail["previousState"]["value"] = "OK" if state != "OK" else "ALARM"
    detail["state"]["value"] = state
    detail["state"]["timestamp"] = at.strftime("%Y-%m-%dT%H:%M:%S.000+0000")
    # The threshold CloudWatch compared: the one the tracker puts on that metric.
    data = json.loads(detail["state"]["reasonData"])
    detail["state"]["reasonData"] = json.dumps({**data, "threshold": limit(metric)})
    return event


def ours(world: dict[str, Any], signal: str, state: str, minutes: float) -> dict[str, Any]:
    """One of the tracker's two alarms of the trn1 instance, on the metric it watches."""
    metric = TRACKER_METRICS["neuron" if signal == "accelerator" else "cpu"]
    return alarm_event(alarm_name(world["iid"], signal), state, minutes, world["iid"], metric)


def checkpoint_object(key: str, minutes: float) -> dict[str, Any]:
    event = json.loads((EVENTS / "s3-object-created.json").read_text())
    event.update(
        {
            "id": f"s3-{key}",
            "time": stamp(T0 + timedelta(minutes=minutes)),
            "account": "123456789012",
        }
    )
    event["region"] = "us-east-1"
    event["detail"]["bucket"]["name"] = "ckpt"
    event["detail"]["object"].update({"key": key, "size": 1024})
    return event


def sweep(world: dict[str, Any], minutes: float) -> Any:
    event = scheduled_event(f"sweep-{minutes}", stamp(T0 + timedelta(minutes=minutes)))
    return deliver(world, "alarm_sweep", event)


def received(world: dict[str, Any]) -> list[str]:
    """The alert ids the team's mailbox got since the last call."""
    ids = []
    while True:
        messages = (
            world["sqs"]
            .receive_message(QueueUrl=world["queue"], MaxNumberOfMessages=10)
            .get("Messages", [])
        )
        if not messages:
            return ids
        for message in messages:
            body = json.loads(message["Body"])
            ids.append(body["MessageAttributes"]["alert_id"]["Value"])
            world["sqs"].delete_message(
                QueueUrl=world["queue"], ReceiptHandle=message["ReceiptHandle"]
            )


def instance_state(world: dict[str, Any]) -> str:
    reservations = world["ec2"].describe_instances(InstanceIds=[world["iid"]])["Reservations"]
    return str(reservations[0]["Instances"][0]["State"]["Name"])


def test_others_alarms_in_alarm_mean_nothing_and_stop_nothing(world: dict[str, Any]) -> None:
    deliver(world, "alarm_state", ours(world, "accelerator", "OK", 5))
    deliver(world, "alarm_state", ours(world, "cpu", "OK", 6))
    deliver(world, "checkpoint", checkpoint_object("runs/llama/step-10/model.pt", 10))
    deliver(world, "checkpoint", checkpoint_object("runs/llama/step-10/_COMPLETE", 11))
    server_cpu = copy.deepcopy(SAMPLE)  # the real sample, on our instance, now
    server_cpu["time"] = stamp(T0 + timedelta(minutes=20))
    server_cpu["detail"]["state"]["timestamp"] = (T0 + timedelta(minutes=20)).strftime(
        "%Y-%m-%dT%H:%M:%S.000+0000"
    )
    metric = server_cpu["detail"]["configuration"]["metrics"][0]["metricStat"]["metric"]
    metric["dimensions"]["InstanceId"] = world["iid"]
    assert deliver(world, "alarm_state", server_cpu)["result"] == "ignored"
    gpu_high = alarm_event(
        "nlp GPU > 90 %", "ALARM", 21, world["iid"], ("NeuronMonitor", "neuroncore_utilization")
    )
    assert deliver(world, "alarm_state", gpu_high)["result"] == "ignored"
    assert sweep(world, 40)["auto_stop"].get(world["iid"]) in (None, "busy", "not_idle")
    assert received(world) == []  # no idle, no input-bound
    assert instance_state(world) == "running"
    # Our own alarms do speak: idle, and stopped once a newer checkpoint is complete.
    deliver(world, "alarm_state", ours(world, "accelerator", "ALARM", 50))
    deliver(world, "alarm_state", ours(world, "cpu", "ALARM", 51))
    assert [i.split(":")[0] for i in received(world)] == ["input_bound", "idle"]
    deliver(world, "checkpoint", checkpoint_object("runs/llama/step-60/model.pt", 60))
    deliver(world, "checkpoint", checkpoint_object("runs/llama/step-60/_COMPLETE", 61))
    sweep(world, 62)
    assert instance_state(world) in ("stopping", "stopped")


def test_a_partial_checkpoint_allows_no_stop_and_its_marker_does(world: dict[str, Any]) -> None:
    deliver(world, "alarm_state", ours(world, "accelerator", "ALARM", 10))
    deliver(world, "alarm_state", ours(world, "cpu", "ALARM", 11))
    deliver(world, "checkpoint", checkpoint_object("runs/llama/step-20/shard-0.pt", 20))
    assert sweep(world, 45)["auto_stop"][world["iid"]] == "waiting_for_checkpoint"
    assert instance_state(world) == "running"  # shards only, however quiet since
    deliver(world, "checkpoint", checkpoint_object("runs/llama/step-20/_COMPLETE", 46))
    assert sweep(world, 47)["auto_stop"][world["iid"]] == "stopped"
    assert instance_state(world) in ("stopping", "stopped")


class CountingTable(DynamoTable):
    """The table adapter, counting the items each transaction writes."""

    written: list[int] = []

    def transact(self, operations: Any) -> None:
        CountingTable.written.append(len(operations))
        super().transact(operations)


def _episodes_then_a_routine_event(
    world: dict[str, Any], monkeypatch: pytest.MonkeyPatch, episodes: int
) -> tuple[list[str], int]:
    """``episodes`` idle episodes on days 0..n-1; on day 45 our CPU alarm goes OK (a
    routine event): the alerts it sent and the items it wrote."""
    day = 24 * 60
    for n in range(episodes):
        deliver(world, "alarm_state", ours(world, "accelerator", "ALARM", n * day + 60))
        deliver(world, "alarm_state", ours(world, "cpu", "ALARM", n * day + 61))
        deliver(world, "alarm_state", ours(world, "accelerator", "OK", n * day + 120))
    assert len(received(world)) == 2 * episodes  # idle and resolved, once each
    monkeypatch.setattr("shared.adapters.table.DynamoTable", CountingTable)
    runtime.reset()
    CountingTable.written = []
    deliver(world, "alarm_state", ours(world, "cpu", "OK", 45 * day))
    return received(world), sum(CountingTable.written)


@pytest.fixture
def world(aws: dict[str, Any]) -> dict[str, Any]:
    return aws


@pytest.mark.parametrize("episodes", [1, 5])
def test_day_45_after_idle_episodes_sends_nothing_old_and_writes_a_bounded_number(
    world: dict[str, Any], monkeypatch: pytest.MonkeyPatch, episodes: int
) -> None:
    sent, written = _episodes_then_a_routine_event(world, monkeypatch, episodes)
    assert sent == []
    # The head and the job's rollup, in one transaction: no outbox write for any old
    # episode (each was recorded once, when it happened), whatever the history.
    assert written == 2


def test_a_retry_after_a_crash_before_the_outbox_still_alerts(
    world: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first delivery writes the head, then stops before recording the idle alert;
    Lambda's retry finds the event applied (a duplicate) and still posts the alert."""
    from shared.adapters.outbox import OutboxStore

    deliver(world, "alarm_state", ours(world, "accelerator", "ALARM", 10))
    assert received(world) == []  # the CPU alarm has not spoken yet
    record = OutboxStore.record
    crashes = []

    def crash_once(self: OutboxStore, alert: Any, now: datetime) -> bool:
        if not crashes:
            crashes.append(alert.alert_id)
            raise RuntimeError("the function timed out")
        return record(self, alert, now)

    monkeypatch.setattr(OutboxStore, "record", crash_once)
    event = ours(world, "cpu", "ALARM", 11)
    with pytest.raises(RuntimeError):
        deliver(world, "alarm_state", event)
    assert received(world) == []
    assert deliver(world, "alarm_state", event)["result"] == "duplicate"
    assert received(world) == crashes  # the idle alert, once
    assert deliver(world, "alarm_state", event)["result"] == "duplicate"
    assert received(world) == []
