"""Previewing alerts: `costtracker replay S.json` lists the alerts it would send (time,
audience, subject); `--alerts` prints each message as its audience receives it;
`--json` carries each alert's alert_id, audience and body."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from costtracker.alert_preview import alert_list, alert_messages
from costtracker.replay import replay
from costtracker.scenario import Scenario

SCENARIOS = Path(__file__).parent.parent / "scenarios"
ROOT = Path(__file__).parent.parent.parent


def run(*argv: str) -> str:
    """The CLI as a user runs it (a process of its own: its logging set up afresh)."""
    result = subprocess.run(
        [sys.executable, "-m", "costtracker.cli", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def declared() -> dict[str, Any]:
    data = json.loads((SCENARIOS / "budget_llama_declared.json").read_text())
    return replay(Scenario.model_validate(data))


def test_the_document_carries_each_alerts_id_audience_and_body(
    declared: dict[str, Any],
) -> None:
    alerts = declared["alerts"]
    assert [a["kind"] for a in alerts] == ["forecast", "budget", "budget", "budget"]
    for alert in alerts:
        assert alert["alert_id"] and alert["audience"] == "finance"
        assert alert["body"].startswith(alert["subject"])


def test_the_list_gives_time_audience_and_subject(declared: dict[str, Any]) -> None:
    listed = alert_list(declared)
    assert listed.startswith("alerts (4; replay --alerts shows each message):")
    assert "2026-11-01T02:01:00Z  finance   Forecast: budget llama-total heads" in listed
    # Predicted, so alerted at the crossing itself (14:30:11.8, rounded up to the second).
    assert "2026-11-01T14:30:12Z  finance   Budget llama-total at 100 %" in listed
    assert all(len(line) <= 80 for line in listed.splitlines())
    assert alert_list({"alerts": []}) == "alerts: none would be sent"


def test_each_message_as_received(declared: dict[str, Any]) -> None:
    messages = alert_messages(declared).split("=" * 80 + "\n")[1:]
    assert len(messages) == 4
    forecast = messages[0]
    assert forecast.startswith("To:       the finance topic's subscribers")
    assert "Subject:  Forecast: budget llama-total heads for $1,114.56" in forecast
    assert "alert_id=forecast:llama-total:total" in forecast
    assert "llama-sft: to its declared end 2026-11-01T16:00:00Z" in forecast
    assert alert_messages({"alerts": []}) == "No alert would be sent."


def test_the_cli_lists_team_alerts_and_prints_them_with_alerts() -> None:
    out = run("replay", str(SCENARIOS / "idle_alarms.json"))
    assert "team nlp     Idle: trn1.32xlarge i-0e1000000000000e1" in out
    messages = run("replay", str(SCENARIOS / "idle_alarms.json"), "--alerts")
    assert "To:       the subscribers of team nlp (context teams.nlp: email, Slack)" in messages
    assert "JOB" not in messages.split("\n", 1)[0]  # the messages only
