"""Per-instance utilization alarms against moto: made on running, retired on a stop and
deleted by the hourly sweep (or by a restart before it)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from moto import mock_aws

from costtracker.lambda_context import FakeLambdaContext
from shared.adapters.alarms import AlarmSpec, CloudWatchAlarms, alarm_specs
from shared.app import runtime
from shared.config.ledger import LedgerConfig, UtilizationConfig
from shared.domain.clock import FixedClock
from tests.aws_events import ec2_state_event
from tests.support import moto_instance, moto_ledger

T0 = datetime(2026, 11, 1, 10, tzinfo=UTC)
TABLE = "ledger-alarms"


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    with mock_aws():
        moto_ledger(monkeypatch, TABLE, LedgerConfig(live_prices=False).model_dump_json())
        ec2 = boto3.client("ec2", region_name="us-east-1")
        ids = {}
        for name, itype, tags in (
            ("trn", "trn1.32xlarge", {"training-job": "llama"}),
            ("gpu", "g6e.xlarge", {"training-job": "vit"}),
            ("cpu", "m5.large", {"training-job": "llama"}),
        ):
            ids[name] = moto_instance(ec2, itype, tags)
        with runtime.override(FixedClock(T0)):
            yield {"ids": ids, "cw": boto3.client("cloudwatch", region_name="us-east-1")}


def state_event(eid: str, iid: str, state: str, minutes: int = 0) -> dict[str, Any]:
    return ec2_state_event(eid, iid, state, T0 + timedelta(minutes=minutes))


def deliver(event: dict[str, Any]) -> dict[str, Any]:
    from functions.alarm_lifecycle.handler import handler as lifecycle
    from functions.instance_state.handler import handler as ledger

    ledger(event, FakeLambdaContext("test"))
    result: dict[str, Any] = lifecycle(event, FakeLambdaContext("test"))
    return result


def alarms(cw: Any) -> dict[str, dict[str, Any]]:
    return {a["AlarmName"]: a for a in cw.describe_alarms()["MetricAlarms"]}


def test_running_trainium_instance_gets_neuron_and_cpu_alarms(aws: dict[str, Any]) -> None:
    iid = aws["ids"]["trn"]
    assert deliver(state_event("e1", iid, "running"))["result"] == "created"
    found = alarms(aws["cw"])
    accel = found[f"costtracker-{iid}-accelerator-low"]
    cpu = found[f"costtracker-{iid}-cpu-low"]
    assert (accel["Namespace"], accel["MetricName"]) == ("NeuronMonitor", "neuroncore_utilization")
    assert (cpu["Namespace"], cpu["MetricName"]) == ("AWS/EC2", "CPUUtilization")
    for alarm, threshold in ((accel, 5.0), (cpu, 10.0)):
        assert alarm["Dimensions"] == [{"Name": "InstanceId", "Value": iid}]
        assert alarm["Threshold"] == threshold
        assert alarm["ComparisonOperator"] == "LessThanThreshold"
        assert alarm["TreatMissingData"] == "missing"  # no data is never "idle"
        assert alarm["Period"] * alarm["EvaluationPeriods"] == 30 * 60


def test_gpu_instance_reads_the_cloudwatch_agent_metric(aws: dict[str, Any]) -> None:
    iid = aws["ids"]["gpu"]
    deliver(state_event("e1", iid, "running"))
    accel = alarms(aws["cw"])[f"costtracker-{iid}-accelerator-low"]
    assert (accel["Namespace"], accel["MetricName"]) == ("CWAgent", "nvidia_smi_utilization_gpu")


def sweep_event(minutes: int) -> dict[str, Any]:
    from tests.aws_events import scheduled_event

    return scheduled_event(f"sweep-{minutes}", T0 + timedelta(minutes=minutes))


def sweep() -> dict[str, Any]:
    from functions.alarm_sweep.handler import handler

    result: dict[str, Any] = handler(sweep_event(120), FakeLambdaContext("test"))
    return result


def test_the_sweep_deletes_retired_alarms_and_a_late_running_adds_none(
    aws: dict[str, Any],
) -> None:
    iid = aws["ids"]["trn"]
    deliver(state_event("e1", iid, "running"))
    assert deliver(state_event("e2", iid, "terminated", 60))["result"] == "retired"
    assert len(alarms(aws["cw"])) == 2  # until the hourly sweep
    assert sweep()["retired_deleted"] == 2
    assert alarms(aws["cw"]) == {}
    assert sweep()["retired_deleted"] == 0  # deleted once
    assert deliver(state_event("e1-again", iid, "running", 0))["result"] == "retired"
    assert alarms(aws["cw"]) == {}


def test_the_sweep_deletes_retired_alarms_in_one_call_per_place(
    aws: dict[str, Any],
) -> None:
    from shared.services.alarm_lifecycle import delete_retired_alarms

    trn, gpu = aws["ids"]["trn"], aws["ids"]["gpu"]
    for n, iid in enumerate((trn, gpu)):
        deliver(state_event(f"run-{n}", iid, "running"))
        deliver(state_event(f"stop-{n}", iid, "stopped", 30))
    spy = Recording(aws["cw"])
    deleted = delete_retired_alarms(runtime.ledger_deps(), spy)
    assert len(deleted) == 4 and len(spy.deletes) == 4
    assert spy.calls == 1  # four names, one DeleteAlarms
    assert alarms(aws["cw"]) == {}


def test_a_restart_before_the_sweep_makes_its_alarms_anew(aws: dict[str, Any]) -> None:
    from functions.instance_state.handler import handler as ledger

    iid = aws["ids"]["trn"]
    names = [f"costtracker-{iid}-accelerator-low", f"costtracker-{iid}-cpu-low"]
    deliver(state_event("e1", iid, "running"))
    deliver(state_event("e2", iid, "stopped", 30))
    ledger(state_event("e3", iid, "running", 40), FakeLambdaContext("test"))
    spy = Recording(aws["cw"])
    assert sync(spy, "e3", iid, "running", 40) == "created"
    # Deleted first, then put: made anew, their state starts over (CloudWatch keeps an
    # alarm's state through a put over it).
    assert spy.log == [("delete", names), ("put", names)]
    assert sweep()["retired_deleted"] == 0  # nothing left to delete
    assert sorted(alarms(aws["cw"])) == names


def test_an_alarm_put_again_while_the_sweep_deletes_it_is_put_back(aws: dict[str, Any]) -> None:
    """The race of a restart with the sweep: the sweep read the alarm as retired, the
    restart put it again, then the sweep's delete removed the fresh alarm."""
    from shared.services.alarm_lifecycle import delete_retired_alarms

    iid = aws["ids"]["trn"]
    deliver(state_event("e1", iid, "running"))
    deliver(state_event("e2", iid, "stopped", 30))

    class RestartDuringDelete(Recording):
        def delete(self, names: list[str], account: str = "", region: str = "") -> None:
            deliver(state_event("e3", iid, "running", 40))  # the restart lands first
            super().delete(names, account, region)

    spy = RestartDuringDelete(aws["cw"])
    assert delete_retired_alarms(runtime.ledger_deps(), spy) == []
    assert sorted(spy.puts) == sorted(f"costtracker-{iid}-{s}-low" for s in ("accelerator", "cpu"))
    assert len(alarms(aws["cw"])) == 2  # put back


def test_cpu_only_node_gets_no_alarms(aws: dict[str, Any]) -> None:
    assert deliver(state_event("e1", aws["ids"]["cpu"], "running"))["result"] == "no_accelerator"
    assert alarms(aws["cw"]) == {}


def test_sweep_deletes_alarms_whose_instance_is_not_running(aws: dict[str, Any]) -> None:
    from shared.services.alarm_lifecycle import sweep_alarms

    iid = aws["ids"]["trn"]
    deliver(state_event("e1", iid, "running"))
    # An orphan: an alarm of ours for an instance the ledger never saw running.
    utilization = LedgerConfig().utilization
    CloudWatchAlarms(aws["cw"]).ensure(
        alarm_specs(utilization, "i-0deadbeefdeadbeef", "p5.48xlarge"), utilization
    )
    deleted = sweep_alarms(runtime.ledger_deps(), runtime.alarms())
    assert sorted(deleted) == [
        "costtracker-i-0deadbeefdeadbeef-accelerator-low",
        "costtracker-i-0deadbeefdeadbeef-cpu-low",
    ]
    assert set(alarms(aws["cw"])) == {
        f"costtracker-{iid}-accelerator-low",
        f"costtracker-{iid}-cpu-low",
    }


class Recording:
    """The real alarms, with each PutMetricAlarm and DeleteAlarms named as it is made."""

    def __init__(self, cw: Any) -> None:
        self.real = CloudWatchAlarms(cw)
        self.puts: list[str] = []
        self.deletes: list[str] = []
        self.calls = 0
        self.listings = 0
        self.log: list[tuple[str, list[str]]] = []

    def ensure(self, specs: list[AlarmSpec], config: UtilizationConfig) -> None:
        self.puts += [s.name for s in specs]
        self.log.append(("put", [s.name for s in specs]))
        self.real.ensure(specs, config)

    def delete(self, names: list[str], account: str = "", region: str = "") -> None:
        self.deletes += names
        self.calls += 1
        self.log.append(("delete", list(names)))
        self.real.delete(names, account, region)

    def managed(self, prefix: str, account: str = "", region: str = "") -> Iterator[str]:
        self.listings += 1
        return self.real.managed(prefix, account, region)


def sync(alarms: Recording, eid: str, iid: str, state: str, minutes: int = 0) -> str:
    from shared.services.alarm_lifecycle import sync_alarms

    return sync_alarms(
        runtime.ledger_deps(),
        alarms,
        event_id=eid,
        at=T0 + timedelta(minutes=minutes),
        instance_id=iid,
        state=state,
        region="us-east-1",
        account="123456789012",
    )


def test_an_alarm_recorded_as_put_is_not_put_again_nor_deleted_twice(
    aws: dict[str, Any],
) -> None:
    iid = aws["ids"]["trn"]
    deliver(state_event("e1", iid, "running"))
    spy = Recording(aws["cw"])
    assert sync(spy, "e1-again", iid, "running") == "created"
    assert spy.puts == []  # the records hold this very request, not deleted since
    assert len(alarms(aws["cw"])) == 2
    deliver(state_event("e2", iid, "stopped", 60))
    assert sync(spy, "e3", iid, "terminated", 61) == "retired"
    assert spy.deletes == []  # both retired already; the sweep deletes them
    deliver(state_event("e4", iid, "running", 120))
    assert len(alarms(aws["cw"])) == 2  # a new run: put again


def test_an_alarm_put_with_another_definition_is_put_again(
    aws: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    iid = aws["ids"]["trn"]
    deliver(state_event("e1", iid, "running"))
    config = LedgerConfig(live_prices=False)
    longer = config.utilization.model_copy(update={"window_minutes": 60})
    monkeypatch.setenv(
        "LEDGER_CONFIG", config.model_copy(update={"utilization": longer}).model_dump_json()
    )
    runtime.reset()
    spy = Recording(aws["cw"])
    assert sync(spy, "e1-again", iid, "running") == "created"
    assert sorted(spy.puts) == [
        f"costtracker-{iid}-accelerator-low",
        f"costtracker-{iid}-cpu-low",
    ]
    cpu = alarms(aws["cw"])[f"costtracker-{iid}-cpu-low"]
    assert cpu["Period"] * cpu["EvaluationPeriods"] == 60 * 60


class FailingOnce(Recording):
    """PutMetricAlarm refused once (throttled, AccessDenied), then accepted."""

    def __init__(self, cw: Any) -> None:
        super().__init__(cw)
        self.failed = False

    def ensure(self, specs: list[AlarmSpec], config: UtilizationConfig) -> None:
        if not self.failed:
            self.failed = True
            raise RuntimeError("Throttling")
        super().ensure(specs, config)


def test_a_put_that_failed_is_put_again_by_the_retry(aws: dict[str, Any]) -> None:
    """The record is written before the put (the first state change needs it), but only
    an accepted put lets a later ``running`` skip it: the event's retry puts again."""
    iid = aws["ids"]["trn"]
    flaky = FailingOnce(aws["cw"])
    with pytest.raises(RuntimeError):
        sync(flaky, "e1", iid, "running")
    assert alarms(aws["cw"]) == {}
    assert sync(flaky, "e1", iid, "running") == "created"  # Lambda's retry
    assert len(alarms(aws["cw"])) == 2
    spy = Recording(aws["cw"])
    assert sync(spy, "e1", iid, "running") == "created"
    assert spy.puts == []  # accepted now: not put a third time


def test_the_census_of_unrecorded_alarms_runs_once_a_day(aws: dict[str, Any]) -> None:
    from shared.services.alarm_lifecycle import sweep_alarms

    utilization = LedgerConfig().utilization
    spy = Recording(aws["cw"])
    orphan = alarm_specs(utilization, "i-0deadbeefdeadbeef", "p5.48xlarge")
    CloudWatchAlarms(aws["cw"]).ensure(orphan, utilization)
    assert len(sweep_alarms(runtime.ledger_deps(), spy)) == 2
    later = alarm_specs(utilization, "i-0feedfacefeedface", "p5.48xlarge")
    CloudWatchAlarms(aws["cw"]).ensure(later, utilization)
    clock = runtime.clock()
    assert isinstance(clock, FixedClock)
    clock.advance_to(T0 + timedelta(hours=23))
    assert sweep_alarms(runtime.ledger_deps(), spy) == []  # listed 23 hours ago
    assert spy.listings == 1 and len(alarms(aws["cw"])) == 2
    clock.advance_to(T0 + timedelta(hours=24))
    assert sorted(sweep_alarms(runtime.ledger_deps(), spy)) == sorted(s.name for s in later)
    assert spy.listings == 2 and alarms(aws["cw"]) == {}
