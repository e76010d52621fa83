"""The operational figures leave as EMF: by team with the team dimension only, levels with
the service dimension (what the dashboard's widgets search for)."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal

import pytest

from shared.adapters import telemetry
from shared.domain.ops_figures import DayFigures, TeamFigures
from tests.aws_events import scheduled_event


def emitted(out: str) -> list[dict]:
    """EMF documents, each metric's values (a list in Powertools' output) as one number."""
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return [
        {k: v[0] if isinstance(v, list) and len(v) == 1 else v for k, v in line.items()}
        for line in lines
    ]


def test_day_figures_as_emf(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    figures = DayFigures(
        day=date(2026, 11, 1),
        teams={"nlp": TeamFigures(Decimal(6), Decimal("1.5")), "idle-team": TeamFigures()},
        checkpoint_storage_gb=Decimal("12.5"),
    )
    telemetry.day_figures(figures)
    telemetry.accelerator_conditions({"idle": 2, "no_metrics": 1})
    telemetry.metrics.flush_metrics()
    lines = emitted(capsys.readouterr().out)
    by_team = {
        (line["team"], name): line[name]
        for line in lines
        if "team" in line
        for name in ("AcceleratorHours", "AcceleratorUtilization")
        if name in line
    }
    assert by_team == {
        ("nlp", "AcceleratorHours"): 6.0,
        ("nlp", "AcceleratorUtilization"): 75.0,
        ("idle-team", "AcceleratorHours"): 0.0,
    }
    for line in lines:
        if "team" in line:
            (directive,) = line["_aws"]["CloudWatchMetrics"]
            assert directive["Dimensions"] == [["team"]]
    (levels,) = [line for line in lines if "IdleAccelerators" in line]
    assert levels["service"] == "costtracker"
    assert (levels["IdleAccelerators"], levels["UnmeasuredAccelerators"]) == (2.0, 1.0)
    assert levels["InputBoundAccelerators"] == 0.0
    assert levels["CheckpointStorageGB"] == 12.5


def test_with_metrics_off_nothing_is_printed_however_many_invocations(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Local runs turn metrics off: 250 invocations, each counting events, print no EMF
    (Powertools itself prints a disabled set once a metric holds 100 values)."""
    from shared.app.event_function import event_function
    from shared.events.envelope import ScheduledEvent

    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    monkeypatch.setenv("TABLE_NAME", "ledger-telemetry")  # the edge reads the settings

    @event_function(ScheduledEvent)
    def handler(event: ScheduledEvent, rt: object) -> dict[str, str]:
        telemetry.count("EventsProcessed")
        telemetry.seconds("ScheduleLag", 1.5)
        return {}

    from costtracker.lambda_context import FakeLambdaContext

    tick = scheduled_event("tick-1", "2026-11-01T00:00:00Z")
    for _ in range(250):
        handler(tick, FakeLambdaContext(function_name="test"))
    out, err = capsys.readouterr()
    assert "_aws" not in out and "_aws" not in err


def test_with_metrics_on_an_invocation_flushes_what_it_counted_and_off_warns_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The flush runs where metrics go somewhere; with metrics off it is not run (it
    would only warn that there is nothing to publish)."""
    import warnings

    from costtracker.lambda_context import FakeLambdaContext
    from shared.app.event_function import event_function
    from shared.events.envelope import ScheduledEvent

    monkeypatch.setenv("TABLE_NAME", "ledger-telemetry")

    @event_function(ScheduledEvent)
    def handler(event: ScheduledEvent, rt: object) -> dict[str, str]:
        telemetry.count("EventsProcessed")
        return {}

    tick = scheduled_event("tick-1", "2026-11-01T00:00:00Z")
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    handler(tick, FakeLambdaContext(function_name="test"))  # type: ignore[arg-type]
    (line,) = [line for line in emitted(capsys.readouterr().out) if "_aws" in line]
    assert line["EventsProcessed"] == 1.0
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        handler(tick, FakeLambdaContext(function_name="test"))  # type: ignore[arg-type]
    assert "_aws" not in capsys.readouterr().out
    assert not [w for w in caught if "No application metrics" in str(w.message)]
