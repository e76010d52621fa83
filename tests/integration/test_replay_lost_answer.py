"""The replay wakes the outbox's re-send path whenever an invocation leaves an alert
pending (issue 27), also one whose outbox write landed but whose answer was lost: the
handler fails, Lambda's retry finds the alert already recorded (``known``) and sends
nothing, and the deployed tick would send it a minute later. The replay must too."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

import pytest

from costtracker.replay import replay
from costtracker.scenario import Scenario
from shared.adapters.outbox import OutboxStore
from tests.integration.conftest import scenario_dict


def ids(document: dict[str, Any]) -> Counter[str]:
    return Counter(a["alert_id"] for a in document["alerts"])


@pytest.mark.parametrize("name", ["idle_alarms.json", "budget_llama.json"])
def test_an_alert_whose_recording_answer_was_lost_is_still_sent(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = Scenario.model_validate(scenario_dict(name))
    expected = ids(replay(scenario))
    assert expected and all(n == 1 for n in expected.values())
    record = OutboxStore.record
    lost: list[str] = []

    def answer_lost_once(self: OutboxStore, alert: Any, now: datetime) -> bool:
        written = record(self, alert, now)
        if written and not lost:
            lost.append(alert.alert_id)
            raise ConnectionError("the write landed; its answer did not")
        return written

    monkeypatch.setattr(OutboxStore, "record", answer_lost_once)
    got = ids(replay(scenario))
    assert lost  # the failure really happened
    assert got == expected  # every alert, once: the lost answer's too
