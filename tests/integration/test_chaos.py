"""Chaos replay: every test scenario and the bundled example, delivered late and twice,
gives the same ledger, summaries and alerts; an alert may only go out later, by no more
than the delay."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from costtracker.chaos import chaotic
from costtracker.replay import replay
from costtracker.scenario import Scenario
from tests.integration.conftest import SCENARIOS

DELAY = timedelta(minutes=5)
ROOT = Path(__file__).resolve().parents[2]
CASES = [
    *sorted(p for p in SCENARIOS.glob("*.json") if "shuffled" not in p.name),
    ROOT / "costtracker" / "examples" / "llama-lora-vs-p5.json",
]


def _at(alert: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(str(alert["at"]).replace("Z", "+00:00"))


def _identity(alert: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(
        alert.get(k)
        for k in ("kind", "budget_id", "threshold", "job_id", "instance_id", "resolves")
    )


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_chaotic_delivery_changes_nothing_but_how_late_alerts_may_be(path: Path) -> None:
    data = json.loads(path.read_text())
    clean = replay(Scenario.model_validate(data))
    chaos = replay(
        Scenario.model_validate(
            {**data, "events": chaotic(data["events"], seed=17, max_delay=DELAY)}
        )
    )
    assert chaos["jobs"] == clean["jobs"]
    assert chaos["daily_summaries"] == clean["daily_summaries"]
    assert {r["event_id"] for r in chaos["rejected_events"]} == {
        r["event_id"] for r in clean["rejected_events"]
    }
    for key in ("alerts", "resolved_alerts"):
        assert sorted(map(_identity, chaos[key]), key=str) == sorted(
            map(_identity, clean[key]), key=str
        )
        for identity in {_identity(a) for a in clean[key]}:
            clean_ats = sorted(_at(a) for a in clean[key] if _identity(a) == identity)
            chaos_ats = sorted(_at(a) for a in chaos[key] if _identity(a) == identity)
            for before, after in zip(clean_ats, chaos_ats, strict=True):
                # +1 minute: a budget tick runs on the minute after the late event.
                late = after - before
                assert timedelta(0) <= late <= DELAY + timedelta(minutes=1), (identity, late)
