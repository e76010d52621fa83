"""Only the alarm the tracker last put speaks (``shared.domain.alarm_record``): its ARN
(account, region, name), metric (namespace, name, dimensions, period, statistic) and
threshold, as a state-change event names them, must all match what was put."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from aws_lambda_powertools import Logger

from shared.adapters.alarm_store import AlarmStore
from shared.adapters.alarms import alarm_specs
from shared.adapters.table import MemoryTable
from shared.app.edge import parse_event
from shared.config.ledger import UtilizationConfig
from shared.domain.alarm_record import AlarmIdentity, PutAlarm, parse_alarm_arn, why_not_ours
from shared.events.aws import AlarmStateChangeEvent

EVENTS = Path(__file__).parent.parent / "events"
MEMBER, REGION, IID = "222222222222", "eu-west-1", "i-0c1000000000000c1"
PUT_AT = datetime(2026, 11, 1, 10, tzinfo=UTC)
CONFIG = UtilizationConfig()


def put() -> PutAlarm:
    """What the tracker puts for the CPU of a trn1 instance of the member account."""
    spec = next(
        s
        for s in alarm_specs(CONFIG, IID, "trn1.32xlarge", account=MEMBER, region=REGION)
        if s.signal == "cpu"
    )
    return PutAlarm(identity=spec.identity(CONFIG), instance_id=IID, signal="cpu", put_at=PUT_AT)


def test_what_the_tracker_puts_is_the_instance_s_account_region_metric_and_threshold() -> None:
    ident = put().identity
    assert ident.arn == f"arn:aws:cloudwatch:{REGION}:{MEMBER}:alarm:costtracker-{IID}-cpu-low"
    assert (ident.namespace, ident.metric, ident.dimensions) == (
        "AWS/EC2",
        "CPUUtilization",
        (("InstanceId", IID),),
    )
    assert (ident.period, ident.stat, ident.threshold) == (300, "Average", Decimal(10))


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({}, ""),
        ({"threshold": Decimal("10.0")}, ""),  # 10.0 and 10 are one threshold
        ({"account": "333333333333"}, "account differs"),
        ({"region": "us-east-1"}, "region differs"),
        ({"namespace": "CWAgent"}, "namespace differs"),
        ({"metric": "NetworkIn"}, "metric differs"),
        ({"dimensions": (("InstanceId", "i-0ffffffffffffffff"),)}, "dimensions differs"),
        ({"period": 60}, "period or statistic differs"),
        ({"stat": "Maximum"}, "period or statistic differs"),
        ({"threshold": Decimal(80)}, "threshold differs"),
        ({"threshold": None}, "no threshold to compare"),
    ],
)
def test_an_alarm_speaks_only_if_all_of_it_matches(change: dict[str, object], reason: str) -> None:
    seen = put().identity.model_copy(update=change)
    assert reason in why_not_ours(put(), seen, PUT_AT + timedelta(hours=1))
    assert bool(why_not_ours(put(), seen, PUT_AT + timedelta(hours=1))) == bool(reason)


def test_no_record_or_a_later_state_of_a_deleted_alarm_is_not_the_tracker_s() -> None:
    seen = put().identity
    assert why_not_ours(None, seen, PUT_AT) == "the tracker put no alarm under this ARN"
    deleted = put().model_copy(update={"deleted_at": PUT_AT + timedelta(hours=2)})
    assert why_not_ours(deleted, seen, PUT_AT + timedelta(hours=1)) == ""  # a late state
    assert "deleted" in why_not_ours(deleted, seen, PUT_AT + timedelta(hours=3))


def test_the_store_keeps_the_last_put_and_its_deletion() -> None:
    store = AlarmStore(MemoryTable())
    ident = put().identity
    store.put(put())
    assert store.get(MEMBER, REGION, ident.name) == put().model_copy(update={"version": 1})
    assert [p.identity for p in store.live()] == [ident]
    store.deleted(ident, PUT_AT + timedelta(hours=2))
    kept = store.get(MEMBER, REGION, ident.name)
    assert kept is not None and kept.deleted_at == PUT_AT + timedelta(hours=2)
    assert not kept.delete_pending
    assert list(store.live()) == []  # out of the sweep's index
    assert list(store.retired_alarms()) == []
    assert store.get("333333333333", REGION, ident.name) is None


def test_a_retired_alarm_waits_for_the_sweep_unless_put_again() -> None:
    store = AlarmStore(MemoryTable())
    ident = put().identity
    store.put(put())
    store.retired(ident, PUT_AT + timedelta(hours=2))
    kept = store.get(MEMBER, REGION, ident.name)
    assert kept is not None and kept.deleted_at == PUT_AT + timedelta(hours=2)
    assert kept.delete_pending and kept.version == 1
    assert list(store.live()) == []
    (retired,) = store.retired_alarms()
    assert (retired.name, retired.instance_id, retired.version) == (ident.name, IID, 1)
    # A restart puts the record again (version 2): the sweep's delete leaves it alone.
    store.put(put(), replacing=kept)
    assert not store.deleted_in_cloudwatch(retired)
    again = store.get(MEMBER, REGION, ident.name)
    assert again is not None and again.version == 2 and again.deleted_at is None
    assert [p.identity for p in store.live()] == [ident]
    # Let go of again, then deleted in CloudWatch: out of both partitions, record kept.
    store.retired(ident, PUT_AT + timedelta(hours=5))
    (retired,) = store.retired_alarms()
    assert store.deleted_in_cloudwatch(retired)
    assert list(store.retired_alarms()) == [] and list(store.live()) == []
    gone = store.get(MEMBER, REGION, ident.name)
    assert gone is not None and gone.deleted_at == PUT_AT + timedelta(hours=5)
    assert not gone.delete_pending


def test_the_real_sample_names_its_arn_metric_and_threshold() -> None:
    raw = json.loads((EVENTS / "alarm-state-change-single-metric.json").read_text())
    event = parse_event(raw, AlarmStateChangeEvent, Logger(service="test"))
    assert event.identity() == AlarmIdentity(
        account="123456789012",
        region="us-east-1",
        name="ServerCpuTooHigh",
        namespace="AWS/EC2",
        metric="CPUUtilization",
        dimensions=(("InstanceId", "i-12345678901234567"),),
        period=300,
        stat="Average",
        threshold=Decimal("50.0"),  # from state.reasonData
    )
    # An ARN that names another alarm than alarmName is not this alarm's.
    raw["resources"] = ["arn:aws:cloudwatch:us-east-1:123456789012:alarm:SomethingElse"]
    assert parse_event(raw, AlarmStateChangeEvent, Logger(service="test")).identity() is None


@pytest.mark.parametrize(
    "arn",
    [
        "arn:aws:ec2:us-east-1:123456789012:instance/i-1",
        "arn:aws:cloudwatch:us-east-1:123456789012:dashboard:x",
        "not an arn",
        "arn:aws:cloudwatch::123456789012:alarm:x",
    ],
)
def test_only_a_cloudwatch_alarm_arn_names_an_alarm(arn: str) -> None:
    assert parse_alarm_arn(arn) is None
