"""Idle classification (rule 6, SPEC metrics section) and checkpoint-safe auto-stop."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from shared.clock import FixedClock
from shared.config import AutoStopConfig, LedgerConfig, PriceOverrides
from shared.costing import classify, condition_runs, idle_windows
from shared.models import AlarmTransition, InstanceProfile, InstanceRecord
from shared.pricing import PriceBook, bundled_snapshot
from shared.services.checkpoints import record_object_event
from shared.services.instance_state import LedgerDeps, record_state_change
from shared.services.utilization import record_alarm_change
from tests.fakes import FakeInventory, InMemoryLedger, RecordingNotifier

T0 = datetime(2026, 11, 1, 10, tzinfo=UTC)
IID = "i-0000000000000aaaa"


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def record(*changes: tuple[int, str, str]) -> InstanceRecord:
    return InstanceRecord(
        profile=InstanceProfile(instance_id=IID, instance_type="trn1.32xlarge", region="us-east-1"),
        job_id="j",
        alarm_transitions=tuple(
            AlarmTransition(event_id=f"a{n}", at=at(m), signal=s, state=v)  # type: ignore[arg-type]
            for n, (m, s, v) in enumerate(changes)
        ),
    )


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ([(0, "accelerator", "ALARM"), (5, "cpu", "ALARM")], ("idle", at(5))),
        ([(0, "accelerator", "ALARM"), (5, "cpu", "OK")], ("input_bound", at(5))),
        ([(0, "accelerator", "INSUFFICIENT_DATA"), (5, "cpu", "ALARM")], ("no_metrics", at(0))),
        ([(0, "accelerator", "OK"), (5, "cpu", "ALARM")], ("busy", at(0))),
        ([(0, "cpu", "ALARM")], ("unknown", None)),
    ],
)
def test_classification(changes, expected) -> None:  # type: ignore[no-untyped-def]
    assert classify(record(*changes)) == expected


def test_insufficient_data_is_never_counted_as_idle() -> None:
    r = record((0, "cpu", "ALARM"), (0, "accelerator", "INSUFFICIENT_DATA"))
    assert idle_windows(r, at(60)) == []


def test_idle_runs_from_the_later_alarm_until_either_leaves_alarm() -> None:
    r = record(
        (0, "accelerator", "ALARM"),
        (10, "cpu", "ALARM"),
        (40, "cpu", "OK"),
        (50, "cpu", "ALARM"),
        (70, "accelerator", "OK"),
    )
    assert idle_windows(r, at(100)) == [(at(10), at(40)), (at(50), at(70))]


def test_condition_runs_are_read_by_time_not_arrival() -> None:
    arrived = record((20, "cpu", "ALARM"), (0, "accelerator", "ALARM"), (10, "cpu", "OK"))
    assert condition_runs(arrived) == [("input_bound", at(10)), ("idle", at(20))]


def _deps(tags: dict[str, str], auto_stop: AutoStopConfig) -> LedgerDeps:
    profile = InstanceProfile(
        instance_id=IID,
        instance_type="trn1.32xlarge",
        region="us-east-1",
        tags={"training-job": "j", **tags},
    )
    config = LedgerConfig(
        live_prices=False,
        auto_stop=auto_stop,
        prices=PriceOverrides(ec2={"trn1.32xlarge": Decimal("21.50")}),
    )
    ledger = InMemoryLedger()
    deps = LedgerDeps(
        ledger=ledger,
        inventory=FakeInventory(profile),
        prices=PriceBook(config, ledger, None, bundled_snapshot(), T0.date()),
        clock=FixedClock(at(0)),
        config=config,
    )
    record_state_change(
        deps, event_id="run", at=at(0), instance_id=IID, state="running", region="us-east-1"
    )
    return deps


class FakeStopper:
    def __init__(self) -> None:
        self.stopped: list[str] = []

    def stop(self, instance_id: str) -> None:
        self.stopped.append(instance_id)


def go_idle(deps: LedgerDeps, stopper: FakeStopper, minute: int = 40):  # type: ignore[no-untyped-def]
    outcomes = []
    for n, (metric, namespace) in enumerate(
        (("neuroncore_utilization", "NeuronMonitor"), ("CPUUtilization", "AWS/EC2"))
    ):
        deps.clock.advance_to(at(minute + n))  # type: ignore[attr-defined]
        outcomes.append(
            record_alarm_change(
                deps,
                RecordingNotifier(),
                stopper,
                event_id=f"idle-{minute}-{n}",
                namespace=namespace,
                metric=metric,
                dimensions={"InstanceId": IID},
                state="ALARM",
                state_at=at(minute + n),
                region="us-east-1",
            )
        )
    return outcomes[-1]


def checkpoint(deps: LedgerDeps, minute: int) -> None:
    record_object_event(
        deps,
        event_id=f"ck{minute}",
        at=at(minute),
        region="us-east-1",
        bucket="b",
        raw_key=f"runs/j/step-{minute}/x.pt",
        size_bytes=1,
    )


ALLOW = {"costtracker:auto-stop": "true"}


def test_auto_stop_never_stops_an_instance_that_did_not_opt_in() -> None:
    stopper = FakeStopper()
    deps = _deps({}, AutoStopConfig(enabled=True, dry_run=False))
    checkpoint(deps, 60)
    outcome = go_idle(deps, stopper)
    assert outcome.condition == "idle" and outcome.auto_stop == "not_allowed"
    assert stopper.stopped == []


def test_auto_stop_waits_for_a_checkpoint_newer_than_the_idle_start() -> None:
    stopper = FakeStopper()
    deps = _deps(ALLOW, AutoStopConfig(enabled=True, dry_run=False))
    checkpoint(deps, 5)  # older than the idle start
    assert go_idle(deps, stopper).auto_stop == "waiting_for_checkpoint"
    assert stopper.stopped == []
    checkpoint(deps, 50)
    from shared.services.utilization import sweep_auto_stop

    assert sweep_auto_stop(deps, stopper) == {IID: "stopped"}
    assert stopper.stopped == [IID]


def test_dry_run_stops_nothing() -> None:
    stopper = FakeStopper()
    deps = _deps({**ALLOW, "costtracker:no-checkpoints": "true"}, AutoStopConfig(enabled=True))
    assert go_idle(deps, stopper).auto_stop == "would_stop"
    assert stopper.stopped == []


def test_job_declaring_no_checkpoints_is_stopped_at_once_when_idle() -> None:
    stopper = FakeStopper()
    deps = _deps(
        {**ALLOW, "costtracker:no-checkpoints": "true"}, AutoStopConfig(enabled=True, dry_run=False)
    )
    assert go_idle(deps, stopper).auto_stop == "stopped"
    assert stopper.stopped == [IID]


def test_alarm_on_another_metric_or_untracked_instance_is_ignored() -> None:
    deps = _deps({}, AutoStopConfig())
    ignored = record_alarm_change(
        deps,
        RecordingNotifier(),
        None,
        event_id="x",
        namespace="AWS/EC2",
        metric="NetworkIn",
        dimensions={"InstanceId": IID},
        state="ALARM",
        state_at=at(1),
        region="us-east-1",
    )
    assert ignored.result == "ignored"
    unknown = record_alarm_change(
        deps,
        RecordingNotifier(),
        None,
        event_id="y",
        namespace="AWS/EC2",
        metric="CPUUtilization",
        dimensions={"InstanceId": "i-0ffffffffffffffff"},
        state="ALARM",
        state_at=at(1),
        region="us-east-1",
    )
    assert unknown.result == "ignored"
