"""Idle classification (cost rule 6, docs/cost-rules.md "Metrics for idle detection"),
alarms read by name, and
checkpoint-safe auto-stop."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from costtracker.fakes.twins import RecordingNotifier
from shared.adapters.instance_stops import InstanceNow
from shared.config.ledger import AutoStopConfig, LedgerConfig, PriceOverrides
from shared.domain.base import Rate, RateSource
from shared.domain.idle import AlarmChange, classify, condition_runs, episodes, idle_spans
from shared.domain.instance import InstanceProfile
from shared.domain.lifecycle import Span
from shared.domain.rates import RatePin
from shared.domain.segments import SegmentCost, price_span
from shared.services.alarm_lifecycle import alarm_of_name
from shared.services.instances import record_state_change
from shared.services.stopper import Stopper
from shared.services.utilization import record_alarm_change, sweep_auto_stop
from tests.support import (
    ACCOUNT,
    REGION,
    Ledger,
    alarm_name,
    memory_ledger,
    object_event,
    tracker_alarm,
)

T0 = datetime(2026, 11, 1, 10, tzinfo=UTC)
IID = "i-0000000000000aaaa"


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def changes(*items: tuple[int, str, str]) -> list[AlarmChange]:
    return [
        AlarmChange(event_id=f"a{n}", at=at(m), signal=s, state=v)  # type: ignore[arg-type]
        for n, (m, s, v) in enumerate(items)
    ]


def segment(start: int = 0, end: int | None = None, usd: str = "36") -> SegmentCost:
    rate = Rate(
        list_usd=Decimal(usd),
        effective_usd=Decimal(usd),
        source=RateSource.OVERRIDE,
        checked_on=T0.date(),
        region=REGION,
    )
    pin = RatePin(
        rate=rate, source=RateSource.OVERRIDE, checked_on=T0.date().isoformat(), region=REGION
    )
    span = Span(
        start=at(start), end=at(end) if end is not None else None, start_event_id=f"r{start}"
    )
    return price_span(IID, span, pin, None)


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        ([(0, "accelerator", "ALARM"), (5, "cpu", "ALARM")], ("idle", at(5))),
        ([(0, "accelerator", "ALARM"), (5, "cpu", "OK")], ("input_bound", at(5))),
        ([(0, "accelerator", "INSUFFICIENT_DATA"), (5, "cpu", "ALARM")], ("no_metrics", at(0))),
        ([(0, "accelerator", "OK"), (5, "cpu", "ALARM")], ("busy", at(0))),
        ([(0, "cpu", "ALARM")], ("unknown", None)),
    ],
)
def test_classification(items, expected) -> None:  # type: ignore[no-untyped-def]
    assert classify(changes(*items), running_since=at(0)) == expected


def test_alarms_before_the_latest_running_do_not_count() -> None:
    # Both alarms went to ALARM in an earlier run; the instance restarted at minute 30.
    old = changes((0, "accelerator", "ALARM"), (5, "cpu", "ALARM"))
    assert classify(old, running_since=at(30)) == ("unknown", None)
    assert classify(old, running_since=None) == ("unknown", None)


def test_insufficient_data_is_never_counted_as_idle() -> None:
    noisy = changes((0, "cpu", "ALARM"), (0, "accelerator", "INSUFFICIENT_DATA"))
    assert idle_spans(segment(), noisy) == []
    assert episodes([segment()], noisy, None) == ()


def test_idle_runs_from_the_later_alarm_until_either_leaves_alarm() -> None:
    flapping = changes(
        (0, "accelerator", "ALARM"),
        (10, "cpu", "ALARM"),
        (40, "cpu", "OK"),
        (50, "cpu", "ALARM"),
        (70, "accelerator", "OK"),
    )
    assert idle_spans(segment(), flapping) == [(at(10), at(40)), (at(50), at(70))]
    # Idle cost: 30 + 20 minutes at $36/h = $30
    (first, second) = episodes([segment()], flapping, None)
    assert (first.eff_num + second.eff_num) / 3600 == Decimal(30)  # type: ignore[operator]


def test_a_stop_ends_idleness_and_a_restart_needs_both_alarms_anew() -> None:
    # Both in ALARM from minute 10; the instance stops at 40 and restarts at 60 with no
    # new alarm events: idle ends at the stop and does not resume.
    both = changes((0, "accelerator", "ALARM"), (10, "cpu", "ALARM"))
    assert idle_spans(segment(0, 40), both) == [(at(10), at(40))]
    assert idle_spans(segment(60), both) == []
    again = [*both, *changes((70, "accelerator", "ALARM"), (75, "cpu", "ALARM"))]
    again = [c.model_copy(update={"event_id": f"b{n}"}) for n, c in enumerate(again)]
    assert idle_spans(segment(60), again) == [(at(75), None)]  # open: idle until now


def test_condition_runs_are_read_by_time_not_arrival() -> None:
    arrived = changes((20, "cpu", "ALARM"), (0, "accelerator", "ALARM"), (10, "cpu", "OK"))
    assert condition_runs(arrived, running_since=at(0)) == [
        ("input_bound", at(10)),
        ("idle", at(20)),
    ]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (f"costtracker-{IID}-accelerator-low", (IID, "accelerator")),
        (f"costtracker-{IID}-cpu-low", (IID, "cpu")),
        (f"team-vision-{IID}-accelerator-low", None),  # someone else's alarm
        (f"costtracker-{IID}-gpu-high", None),
        ("costtracker-not-an-instance-cpu-low", None),
        (f"{IID}-cpu-low", None),
    ],
)
def test_only_the_trackers_own_alarm_names_speak_for_idleness(name, expected) -> None:  # type: ignore[no-untyped-def]
    assert alarm_of_name(name, "costtracker-") == expected


def _ledger(monkeypatch, tags: dict[str, str], auto_stop: AutoStopConfig) -> Ledger:  # type: ignore[no-untyped-def]
    profile = InstanceProfile(
        instance_id=IID,
        instance_type="trn1.32xlarge",
        region=REGION,
        tags={"training-job": "j", **tags},
    )
    config = LedgerConfig(
        live_prices=False,
        auto_stop=auto_stop,
        prices=PriceOverrides(ec2={"trn1.32xlarge": Decimal("21.50")}),
    )
    ledger = memory_ledger(profile, config=config, now=at(0))
    record_state_change(
        ledger.deps,
        event_id="run",
        at=at(0),
        instance_id=IID,
        state="running",
        region=REGION,
        account=ACCOUNT,
    )
    return ledger


class FakeInstanceStops:
    """EC2 as the stopper sees it: each instance's state and tags now, and the stops."""

    def __init__(self, tags: dict[str, str] | None = None, state: str = "running") -> None:
        self.tags = {"training-job": "j", **ALLOW} if tags is None else tags
        self.state = state
        self.stopped: list[str] = []

    def current(self, instance_id: str, region: str, account: str = "") -> InstanceNow | None:
        return InstanceNow(self.state, dict(self.tags))

    def stop(self, instance_id: str, region: str, account: str = "") -> None:
        self.stopped.append(instance_id)


class FakeStopper(Stopper):
    """The real stopper over ``FakeInstanceStops``."""

    def __init__(self, tags: dict[str, str] | None = None, state: str = "running") -> None:
        self.ec2 = FakeInstanceStops(tags, state)
        super().__init__(self.ec2, "costtracker:auto-stop")

    @property
    def stopped(self) -> list[str]:
        return self.ec2.stopped


def alarm(
    ledger: Ledger,
    stopper,
    eid: str,
    signal: str,
    state: str,
    minute: int,  # type: ignore[no-untyped-def]
    name: str | None = None,
    notifier: RecordingNotifier | None = None,
):
    ledger.clock.advance_to(at(minute))
    return record_alarm_change(
        ledger.deps,
        notifier or RecordingNotifier(),
        stopper,
        event_id=eid,
        alarm_name=name or alarm_name(IID, signal),
        seen=tracker_alarm(ledger.deps, IID, signal),
        state=state,
        state_at=at(minute),
    )


def go_idle(ledger: Ledger, stopper: FakeStopper, minute: int = 40):  # type: ignore[no-untyped-def]
    alarm(ledger, stopper, f"idle-{minute}-0", "accelerator", "ALARM", minute)
    return alarm(ledger, stopper, f"idle-{minute}-1", "cpu", "ALARM", minute + 1)


def checkpoint(ledger: Ledger, minute: int) -> None:
    object_event(ledger, f"ck{minute}", at(minute), f"runs/j/step-{minute}/x.pt", 1)


ALLOW = {"costtracker:auto-stop": "true"}


def test_auto_stop_never_stops_an_instance_that_did_not_opt_in(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    stopper = FakeStopper()
    ledger = _ledger(monkeypatch, {}, AutoStopConfig(enabled=True, dry_run=False))
    checkpoint(ledger, 60)
    outcome = go_idle(ledger, stopper)
    assert outcome.condition == "idle" and outcome.auto_stop == "not_allowed"
    assert stopper.stopped == []


@pytest.mark.parametrize("value", ["True", "yes", "1", "true ", ""])
def test_auto_stop_needs_the_tag_value_exactly_true(monkeypatch, value: str) -> None:  # type: ignore[no-untyped-def]
    stopper = FakeStopper()
    ledger = _ledger(
        monkeypatch,
        {"costtracker:auto-stop": value, "costtracker:no-checkpoints": "true"},
        AutoStopConfig(enabled=True, dry_run=False),
    )
    assert go_idle(ledger, stopper).auto_stop == "not_allowed"
    assert stopper.stopped == []


def test_auto_stop_waits_for_a_checkpoint_newer_than_the_idle_start(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    stopper = FakeStopper()
    ledger = _ledger(monkeypatch, ALLOW, AutoStopConfig(enabled=True, dry_run=False))
    checkpoint(ledger, 5)  # older than the idle start
    assert go_idle(ledger, stopper).auto_stop == "waiting_for_checkpoint"
    assert stopper.stopped == []
    checkpoint(ledger, 50)
    ledger.clock.advance_to(at(55))  # its step may still be being written: not yet
    assert sweep_auto_stop(ledger.deps, stopper) == {IID: "waiting_for_checkpoint"}
    ledger.clock.advance_to(at(60))  # ten quiet minutes: the checkpoint is complete
    assert sweep_auto_stop(ledger.deps, stopper) == {IID: "stopped"}
    assert stopper.stopped == [IID]


def test_auto_stop_with_a_completion_marker_waits_for_the_marker(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    stopper = FakeStopper()
    ledger = _ledger(monkeypatch, ALLOW, AutoStopConfig(enabled=True, dry_run=False))
    config = ledger.deps.config
    marked = config.model_copy(
        update={
            "checkpoint": config.checkpoint.model_copy(update={"completion_marker": "_COMPLETE"})
        }
    )
    ledger.deps = type(ledger.deps)(**{**ledger.deps.__dict__, "config": marked})
    assert go_idle(ledger, stopper).auto_stop == "waiting_for_checkpoint"
    checkpoint(ledger, 50)  # a shard of step 50, written after the idle start
    ledger.clock.advance_to(at(90))  # quiet for long: still no marker, still no stop
    assert sweep_auto_stop(ledger.deps, stopper) == {IID: "waiting_for_checkpoint"}
    object_event(ledger, "marker", at(91), "runs/j/step-50/_COMPLETE", 0)
    assert sweep_auto_stop(ledger.deps, stopper) == {IID: "stopped"}


def test_dry_run_stops_nothing(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    stopper = FakeStopper()
    ledger = _ledger(
        monkeypatch, {**ALLOW, "costtracker:no-checkpoints": "true"}, AutoStopConfig(enabled=True)
    )
    assert go_idle(ledger, stopper).auto_stop == "would_stop"
    assert stopper.stopped == []


def test_job_declaring_no_checkpoints_is_stopped_at_once_when_idle(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    stopper = FakeStopper()
    ledger = _ledger(
        monkeypatch,
        {**ALLOW, "costtracker:no-checkpoints": "true"},
        AutoStopConfig(enabled=True, dry_run=False),
    )
    assert go_idle(ledger, stopper).auto_stop == "stopped"
    assert stopper.stopped == [IID]


def test_an_instance_that_opted_out_since_first_sight_is_not_stopped(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The ledger cached the opt-in tag when it first saw the instance; EC2 has it no more."""
    stopper = FakeStopper(tags={"training-job": "j"})
    ledger = _ledger(
        monkeypatch,
        {**ALLOW, "costtracker:no-checkpoints": "true"},
        AutoStopConfig(enabled=True, dry_run=False),
    )
    assert go_idle(ledger, stopper).auto_stop == "opted_out"
    assert sweep_auto_stop(ledger.deps, stopper) == {IID: "opted_out"}
    assert stopper.stopped == []


def test_an_instance_no_longer_running_is_left_alone(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    stopper = FakeStopper(state="stopped")
    ledger = _ledger(
        monkeypatch,
        {**ALLOW, "costtracker:no-checkpoints": "true"},
        AutoStopConfig(enabled=True, dry_run=False),
    )
    assert go_idle(ledger, stopper).auto_stop == "not_running"
    assert stopper.stopped == []


def test_input_bound_is_not_idle_and_never_stops(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    stopper = FakeStopper()
    ledger = _ledger(
        monkeypatch,
        {**ALLOW, "costtracker:no-checkpoints": "true"},
        AutoStopConfig(enabled=True, dry_run=False),
    )
    alarm(ledger, stopper, "a", "accelerator", "ALARM", 40)
    outcome = alarm(ledger, stopper, "c", "cpu", "OK", 41)
    assert outcome.condition == "input_bound" and outcome.auto_stop is None
    assert stopper.stopped == []


def test_idle_alerts_once_and_its_cost_accrues_until_the_alarm_clears(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    ledger = _ledger(monkeypatch, {}, AutoStopConfig())
    notifier = RecordingNotifier()
    alarm(ledger, None, "a", "accelerator", "ALARM", 30, notifier=notifier)
    alarm(ledger, None, "c", "cpu", "ALARM", 40, notifier=notifier)
    alarm(ledger, None, "c", "cpu", "ALARM", 40, notifier=notifier)  # duplicate event
    assert [a.kind for a in notifier.sent] == ["idle"]
    # Idle from minute 40 while open: 20 minutes at $21.50/h by minute 60.
    assert ledger.job("j", at(60)).wasted_idle_usd == Decimal("21.50") / 3
    alarm(ledger, None, "a2", "accelerator", "OK", 70, notifier=notifier)
    assert [a.kind for a in notifier.sent] == ["idle", "resolved"]
    cost = ledger.job("j", at(120))
    assert cost.wasted_idle_usd == Decimal("21.50") / 2  # 30 minutes: 40 -> 70
    assert cost.idle_seconds == 1800


def test_alarm_of_another_name_or_an_instance_ec2_does_not_know_is_ignored(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    ledger = _ledger(monkeypatch, {}, AutoStopConfig(enabled=True, dry_run=False))
    stopper = FakeStopper()
    # Someone else's alarms on the same instance, even both "low" and in ALARM.
    for n, signal in enumerate(("accelerator", "cpu")):
        foreign = alarm(
            ledger,
            stopper,
            f"x{n}",
            signal,
            "ALARM",
            10 + n,
            name=alarm_name(IID, signal, prefix="team-vision-"),
        )
        assert foreign.result == "ignored"
    assert ledger.job("j", at(60)).wasted_idle_usd == 0
    unknown = alarm(
        ledger, stopper, "y", "cpu", "ALARM", 12, name=alarm_name("i-0ffffffffffffffff", "cpu")
    )
    assert unknown.result == "ignored"
    assert stopper.stopped == []
