"""A day's readers (daily summary, FOCUS rows, operations figures) read sealed records
from the day on only and skip the checkpoint heads of objects whose storage ended
before the day; their figures are those of a reading of the job's whole history."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from shared.config.ledger import LedgerConfig, PriceOverrides
from shared.domain.checkpoint import WINDOW, CheckpointHead, ObjectEvent, apply_object_event
from shared.domain.clock import day_bounds
from shared.domain.instance import InstanceProfile
from shared.services import job_view
from shared.services.instances import record_spot_notice, record_state_change
from shared.services.ops_metrics import day_figures
from shared.services.summaries import summarize_day
from tests.support import ACCOUNT, REGION, Ledger, memory_ledger, object_event

DAY1 = datetime(2026, 11, 1, tzinfo=UTC)
HOUR = 3600
SPOT = LedgerConfig(live_prices=False, prices=PriceOverrides(spot={"p5.48xlarge": Decimal(36)}))
I1, I2, I3 = "i-0000000000000001a", "i-0000000000000002a", "i-0000000000000003a"


def at(hours: float) -> datetime:
    return DAY1 + timedelta(seconds=round(hours * HOUR))


def event(ledger: Ledger, eid: str, hours: float, key: str, size: int | None) -> None:
    object_event(ledger, eid, at(hours), f"runs/j/{key}", size)


def history(ledger: Ledger) -> None:
    """Objects of one job across three days: gone on day 1, gone on day 2, live."""
    event(ledger, "a-w", 0.5, "step-1/a.pt", 2**30)
    event(ledger, "a-d", 12, "step-1/a.pt", None)  # ended on day 1
    for n in range(WINDOW + 4):  # overwritten until versions are sealed off its head
        event(ledger, f"b-w{n}", 1 + n / 10, "step-2/b.pt", 2**29 + n)
    event(ledger, "b-d", 23.999, "step-2/b.pt", None)  # ended on day 1, seconds before day 2
    event(ledger, "c-w", 13, "step-3/c.pt", 2**31)
    event(ledger, "c-d", 24 + 6, "step-3/c.pt", None)  # ended on day 2
    event(ledger, "d-w", 24 + 3, "step-4/d.pt", 2**30)  # stored ever since
    event(ledger, "e-w", 48 + 1, "step-5/e.pt", 2**28)  # written on day 3


def spot(instance_id: str) -> InstanceProfile:
    return InstanceProfile(
        instance_id=instance_id,
        instance_type="p5.48xlarge",
        region=REGION,
        lifecycle="spot",
        tags={"training-job": "j"},
    )


def runs(ledger: Ledger) -> None:
    """Spot instances of the same job across the three days, interrupted on days 1 and 2
    (so a reading of the whole job goes back to its start for rerun windows)."""

    def state(instance_id: str, eid: str, hours: float, value: str) -> None:
        record_state_change(
            ledger.deps, event_id=eid, at=at(hours), instance_id=instance_id, state=value,
            region=REGION, account=ACCOUNT,
        )  # fmt: skip

    def notice(instance_id: str, eid: str, hours: float) -> None:
        record_spot_notice(
            ledger.deps, event_id=eid, at=at(hours), instance_id=instance_id,
            action="terminate", region=REGION, account=ACCOUNT,
        )  # fmt: skip

    state(I1, "1r", 0.2, "running")
    notice(I1, "1n", 20)
    state(I1, "1x", 20.03, "terminated")
    state(I2, "2r", 1, "running")
    state(I2, "2s", 10, "stopped")
    state(I2, "2r2", 22, "running")  # runs into day 2
    notice(I2, "2n", 30)
    state(I2, "2x", 30.05, "terminated")
    state(I3, "3r", 26, "running")
    state(I3, "3s", 50, "stopped")  # ends on day 3


def heads_read(ledger: Ledger, day: date, now: datetime) -> set[str]:
    start, _ = day_bounds(day)
    return {
        head.key.rsplit("/", 1)[-1]
        for _, records in job_view.records_active_on(ledger.deps, day, start, now)
        for head in records.checkpoints
    }


def test_a_day_skips_the_objects_whose_storage_ended_before_it() -> None:
    now = at(72)
    ledger = memory_ledger(now=now)
    history(ledger)
    everything = {"a.pt", "b.pt", "c.pt", "d.pt", "e.pt"}
    assert heads_read(ledger, DAY1.date(), now) == everything
    assert heads_read(ledger, date(2026, 11, 2), now) == everything - {"a.pt", "b.pt"}
    assert heads_read(ledger, date(2026, 11, 3), now) == {"d.pt", "e.pt"}


def test_the_day_figures_are_those_of_the_whole_history(monkeypatch: pytest.MonkeyPatch) -> None:
    now = at(72)
    ledger = memory_ledger(spot(I1), spot(I2), spot(I3), config=SPOT, now=now)
    runs(ledger)
    history(ledger)

    def figures() -> list[Any]:
        out = []
        for n in range(3):
            day = DAY1.date() + timedelta(days=n)
            summary, rows = summarize_day(ledger.deps, day, now)
            out.append((summary, rows, day_figures(ledger.deps, day, now)))
        return out

    filtered = figures()
    load_job = job_view.load_job

    def whole_history(*args: Any, **kwargs: Any) -> Any:
        kwargs.pop("window", None)
        return load_job(*args, **kwargs)

    monkeypatch.setattr(job_view, "load_job", whole_history)
    assert figures() == filtered
    assert [s["checkpoint_storage_usd"] != "0.00" for s, _, _ in filtered] == [True] * 3
    assert [s["instance_usd"] != "0.00" for s, _, _ in filtered] == [True] * 3
    assert [s["wasted_rerun_usd"] != "0.00" for s, _, _ in filtered[:2]] == [True] * 2


def test_a_head_knows_when_its_storage_ended() -> None:
    def head(*events: tuple[str, float, int | None]) -> CheckpointHead:
        h = CheckpointHead(bucket="b", key="k", job_id="j", region=REGION)
        for eid, hours, size in events:
            h = apply_object_event(h, ObjectEvent(event_id=eid, at=at(hours), size_bytes=size)).head
        return h

    assert head().stored_until is None
    assert head(("w", 1, 10)).stored_until is None
    assert head(("w", 1, 10), ("d", 2, None)).stored_until == at(2)
    assert head(("d", 2, None), ("w", 1, 10)).stored_until == at(2)  # arrival order aside
    assert head(("w", 1, 10), ("d", 2, None), ("w2", 3, 10)).stored_until is None
    overwritten = [(f"w{n}", 1 + n, 10) for n in range(WINDOW + 3)]
    sealed = head(*overwritten, ("d", 20, None))
    assert sealed.sealed_count > 0 and sealed.stored_until == at(20)
    # every version sealed off: the floor (the last event it dropped) bounds them
    gone = head(*overwritten, ("d", 20, None), *[(f"x{n}", 21 + n, None) for n in range(WINDOW)])
    assert gone.versions == () and gone.stored_until == at(20)
