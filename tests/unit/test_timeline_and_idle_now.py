"""The timeline split by component, and the accelerators idle now, on records made by
the real services (state changes and the tracker's own alarms) over the in-memory table."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from shared.domain.ebs import Volume
from shared.services.idle_now import idle_now
from shared.services.timeline import cumulative_points
from tests.support import Timeline, job_records
from tests.unit.test_change_decomposition import CPU, GPU, TRN, ledger_after, profile

NOW = datetime(2026, 11, 16, 12, tzinfo=UTC)
START = datetime(2026, 11, 16, 0, tzinfo=UTC)
MONEY = Decimal("0.000000001")


def test_components_add_up_to_the_total_at_every_point() -> None:
    events = Timeline()
    events.run(TRN, START, NOW)
    volumes = (Volume(volume_id="vol-1", size_gib=1024),)
    ledger = ledger_after(events, profile(TRN, "trn1.32xlarge", "job", volumes))
    records = job_records(ledger, "job", START)
    points = cumulative_points(records, START, NOW, 5, ledger.deps.prices.series)
    assert [p["at"] for p in points] == [
        "2026-11-16T00:00:00Z",
        "2026-11-16T03:00:00Z",
        "2026-11-16T06:00:00Z",
        "2026-11-16T09:00:00Z",
        "2026-11-16T12:00:00Z",
    ]
    assert points[0]["total_usd"] == "0.000000000"
    assert points[2]["instance_usd"] == "129.000000000"  # 6 h x $21.50
    assert points[-1]["instance_usd"] == "258.000000000"  # 12 h x $21.50
    # 1,024 GiB x $0.08 = $81.92 a month; 12 h of November's 720 h = $1.365333...
    ebs = Decimal("81.92") * 12 / 720
    assert points[-1]["ebs_usd"] == f"{ebs.quantize(MONEY)}"
    assert points[-1]["checkpoint_storage_usd"] == "0.000000000"
    for point in points:
        parts = (point["instance_usd"], point["ebs_usd"], point["checkpoint_storage_usd"])
        assert sum(map(Decimal, parts)) == Decimal(point["total_usd"])
    totals = [Decimal(p["total_usd"]) for p in points]
    assert totals == sorted(totals)  # cumulative: never falls
    # The last point is the job's total (read from its rollups, another path).
    assert Decimal(points[-1]["total_usd"]) == (Decimal(258) + ebs).quantize(MONEY)
    assert Decimal(points[-1]["total_usd"]) == ledger.job("job", NOW).total_usd.quantize(MONEY)


def test_idle_now_names_since_when_and_the_cost() -> None:
    """Four instances of one job:
    - TRN runs from midnight; its accelerator alarm goes to ALARM at 10:30, CPU at 10:45:
      idle since 10:45, 1.25 h x $21.50 = $26.875 so far;
    - GPU runs from midnight; accelerator low at 11:00 with the CPU busy: input-bound
      since 11:00, 1 h x $55.04 (most costly: listed first);
    - a second trn1 had the same alarms but stopped at 11:30: not idle now;
    - a CPU instance (m5.large) is running: never listed, it has no accelerator."""
    stopped = "i-0000000000000d004"
    events = Timeline()
    for iid in (TRN, GPU, CPU):
        events.run(iid, START)
    events.run(stopped, START, datetime(2026, 11, 16, 11, 30, tzinfo=UTC))
    for iid in (TRN, stopped):
        events.alarm(iid, "accelerator", "ALARM", datetime(2026, 11, 16, 10, 30, tzinfo=UTC))
        events.alarm(iid, "cpu", "ALARM", datetime(2026, 11, 16, 10, 45, tzinfo=UTC))
    events.alarm(GPU, "cpu", "OK", datetime(2026, 11, 16, 10, 0, tzinfo=UTC))
    events.alarm(GPU, "accelerator", "ALARM", datetime(2026, 11, 16, 11, 0, tzinfo=UTC))
    ledger = ledger_after(
        events,
        profile(TRN, "trn1.32xlarge", "job"),
        profile(GPU, "p5.48xlarge", "job"),
        profile(CPU, "m5.large", "job"),
        profile(stopped, "trn1.32xlarge", "job"),
    )
    heads = job_records(ledger, "job", START).heads
    assert len(heads) == 4
    rows = idle_now(heads, NOW, ledger.deps.prices.series)
    assert rows == [
        {
            "instance_id": GPU,
            "instance_type": "p5.48xlarge",
            "job_id": "job",
            "condition": "input_bound",
            "since": "2026-11-16T11:00:00Z",
            "idle_seconds": 3600,
            "cost_usd": "55.040000000",  # 1 h x $55.04
            "burn_rate_usd_per_hour": "55.040000000",
        },
        {
            "instance_id": TRN,
            "instance_type": "trn1.32xlarge",
            "job_id": "job",
            "condition": "idle",
            "since": "2026-11-16T10:45:00Z",
            "idle_seconds": 4500,
            "cost_usd": "26.875000000",  # 1.25 h x $21.50
            "burn_rate_usd_per_hour": "21.500000000",
        },
    ]


def test_an_alarm_of_another_name_does_not_make_an_instance_idle_now() -> None:
    """Only the tracker's own alarms (costtracker-<instance-id>-...) speak for idleness."""
    from shared.services.utilization import record_alarm_change
    from tests.support import alarm_name, tracker_alarm

    events = Timeline()
    events.run(TRN, START)
    ledger = ledger_after(events, profile(TRN, "trn1.32xlarge", "job"))
    for n, signal in enumerate(("accelerator", "cpu")):
        outcome = record_alarm_change(
            ledger.deps, ledger.notifier, None, event_id=f"foreign-{n}",
            alarm_name=alarm_name(TRN, signal, prefix="team-vision-"),
            seen=tracker_alarm(ledger.deps, TRN, signal), state="ALARM",
            state_at=datetime(2026, 11, 16, 10, tzinfo=UTC),
        )  # fmt: skip
        assert outcome.result == "ignored"
    heads = job_records(ledger, "job", START).heads
    assert idle_now(heads, NOW, ledger.deps.prices.series) == []
