"""The timeline split by component, and the accelerators idle now (pure functions)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from shared.costing import spend_between
from shared.models import AlarmTransition, Transition, Volume
from shared.services.idle_now import idle_now
from shared.services.timeline import cumulative_points
from tests.unit.test_change_decomposition import rate, record

NOW = datetime(2026, 11, 16, 12, tzinfo=UTC)


def test_components_add_up_to_the_total_at_every_point() -> None:
    base = record("i-trn", "trn1.32xlarge", "21.50", [(datetime(2026, 11, 16, 0, tzinfo=UTC), NOW)])
    profile = base.profile.model_copy(update={"volumes": (Volume(volume_id="v", size_gib=1024),)})
    trn = base.model_copy(update={"profile": profile, "volume_rates": {"gp3": rate("0.08")}})
    start = datetime(2026, 11, 16, 0, tzinfo=UTC)
    points = cumulative_points([trn], [], start, NOW, 5)
    assert [p["at"] for p in points][::2] == [
        "2026-11-16T00:00:00Z",
        "2026-11-16T06:00:00Z",
        "2026-11-16T12:00:00Z",
    ]
    assert points[0]["total_usd"] == "0.000000000"
    assert points[-1]["instance_usd"] == "258.000000000"  # 12 h x $21.50
    for point in points:
        parts = (point["instance_usd"], point["ebs_usd"], point["checkpoint_storage_usd"])
        assert sum(map(Decimal, parts)) == Decimal(point["total_usd"])
    total = spend_between([trn], [], start - timedelta(seconds=1), NOW, NOW)
    assert Decimal(points[-1]["total_usd"]) == total.quantize(Decimal("0.000000001"))


def test_idle_now_names_since_when_and_the_cost() -> None:
    start = datetime(2026, 11, 16, 0, tzinfo=UTC)
    open_run = record("i-idle", "trn1.32xlarge", "21.50", [(start, NOW)])
    open_run = open_run.model_copy(
        update={
            "transitions": open_run.transitions[:1],  # still running
            "alarm_transitions": (
                AlarmTransition(
                    event_id="a",
                    at=datetime(2026, 11, 16, 10, 30, tzinfo=UTC),
                    signal="accelerator",
                    state="ALARM",
                ),
                AlarmTransition(
                    event_id="c",
                    at=datetime(2026, 11, 16, 10, 45, tzinfo=UTC),
                    signal="cpu",
                    state="ALARM",
                ),
            ),
        }
    )
    stopped = record("i-stopped", "trn1.32xlarge", "21.50", [(start, NOW)])
    cpu = record("i-cpu", "m5.large", "0.096", [(start, NOW)]).model_copy(
        update={"transitions": (Transition(event_id="r", at=start, state="running"),)}
    )
    rows = idle_now([open_run, stopped, cpu], NOW)
    assert rows == [
        {
            "instance_id": "i-idle",
            "instance_type": "trn1.32xlarge",
            "job_id": "job",
            "condition": "idle",
            "since": "2026-11-16T10:45:00Z",
            "idle_seconds": 4500,
            "cost_usd": "26.875000000",  # 1.25 h x $21.50
            "burn_rate_usd_per_hour": "21.500000000",
        }
    ]
