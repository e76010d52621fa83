"""The stack's CloudWatch dashboard: the tracker's health beside the admins' operational
picture (accelerator-hours and utilization by team, idle accelerators, interruptions,
checkpoint storage), each widget on the metric the functions emit."""

from __future__ import annotations

import json
from typing import Any

from conftest import Synthesized

from shared.adapters.telemetry import CONDITION_METRICS


def widgets(synthesized: Synthesized) -> list[dict[str, Any]]:
    (dashboard,) = synthesized.resources("AWS::CloudWatch::Dashboard").values()
    body = dashboard["Properties"]["DashboardBody"]
    if isinstance(body, dict):  # Fn::Join of text and tokens (ARNs, names): tokens as "X"
        body = "".join(p if isinstance(p, str) else "X" for p in body["Fn::Join"][1])
    found: list[dict[str, Any]] = json.loads(body)["widgets"]
    return found


def by_title(synthesized: Synthesized) -> dict[str, dict[str, Any]]:
    return {
        w["properties"].get("title", w["properties"].get("markdown", "")[:20]): w
        for w in widgets(synthesized)
    }


def expressions(widget: dict[str, Any]) -> list[str]:
    return [
        entry["expression"]
        for metric in widget["properties"].get("metrics", [])
        for entry in metric
        if isinstance(entry, dict) and "expression" in entry
    ]


def metric_names(widget: dict[str, Any]) -> set[str]:
    """Names of plain metrics: [namespace, name, dim, value, ..., {options}]."""
    return {m[1] for m in widget["properties"].get("metrics", []) if m and m[0] == "CostTracker"}


def periods(widget: dict[str, Any]) -> set[int]:
    return {m[-1]["period"] for m in widget["properties"]["metrics"] if isinstance(m[-1], dict)}


def test_accelerator_hours_and_utilization_by_team(synthesized: Synthesized) -> None:
    widgets_by_title = by_title(synthesized)
    hours = widgets_by_title["Accelerator instance-hours by team (daily)"]
    assert expressions(hours) == [
        "SEARCH('{CostTracker,team} MetricName=\"AcceleratorHours\"', 'Maximum', 86400)"
    ]
    utilization = widgets_by_title[
        "Accelerator utilization by team (% of running time not idle, daily)"
    ]
    assert expressions(utilization) == [
        "SEARCH('{CostTracker,team} MetricName=\"AcceleratorUtilization\"', 'Maximum', 86400)"
    ]
    axis = utilization["properties"]["yAxis"]["left"]
    assert (axis["min"], axis["max"]) == (0, 100)


def test_idle_interruptions_and_checkpoint_storage(synthesized: Synthesized) -> None:
    widgets_by_title = by_title(synthesized)
    idle = widgets_by_title["Running accelerators now: idle, input-bound, unmeasured (hourly)"]
    assert metric_names(idle) == {
        CONDITION_METRICS["idle"],
        CONDITION_METRICS["input_bound"],
        CONDITION_METRICS["no_metrics"],
    }
    assert periods(idle) == {3600}
    assert metric_names(widgets_by_title["Spot interruptions (per hour)"]) == {"SpotInterruptions"}
    storage = widgets_by_title["Checkpoint storage (GB at each day's end)"]
    assert metric_names(storage) == {"CheckpointStorageGB"}
    assert periods(storage) == {86400}
    note = [w for w in widgets(synthesized) if w["type"] == "text"]
    assert "not call idle" in note[0]["properties"]["markdown"]


def test_health_widgets_stay_beside_them(synthesized: Synthesized) -> None:
    widgets_by_title = by_title(synthesized)
    for title in (
        "Events processed / rejected / duplicates",
        "Function errors",
        "Dead-letter queue depth",
        "Budget tick lag (s) and alerts sent",
    ):
        assert title in widgets_by_title, title
    health = widgets_by_title["Tracker health: dead-letter alarms"]
    assert health["type"] == "alarm"
    dead_letter_alarms = [
        r for r in synthesized.resources("AWS::CloudWatch::Alarm").values()
        if r["Properties"].get("MetricName") == "ApproximateNumberOfMessagesVisible"
    ]  # fmt: skip
    assert len(health["properties"]["alarms"]) == len(dead_letter_alarms) > 0
