"""The tracker's own metrics (CloudWatch EMF through Powertools Metrics): events
processed and rejected, alerts sent, schedule lag, and daily spend by project/team; the
admins' operational picture (accelerator-hours and utilization by team, idle
accelerators, spot interruptions, checkpoint storage: ``shared.services.ops_metrics``)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from decimal import Decimal
from typing import TYPE_CHECKING

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.metrics import MetricUnit, single_metric
from aws_lambda_powertools.metrics.functions import is_metrics_disabled

# A run with nothing to count (most schedule runs) is normal, not worth a warning.
warnings.filterwarnings("ignore", message="No application metrics to publish")

if TYPE_CHECKING:
    from shared.domain.ops_figures import DayFigures

NAMESPACE = "CostTracker"
metrics = Metrics(namespace=NAMESPACE, service="costtracker")


def enabled() -> bool:
    """Whether metrics go anywhere (off in local runs and tests): figures that cost reads
    to compute are computed only then."""
    return not is_metrics_disabled()


def _add(name: str, unit: MetricUnit, value: float) -> None:
    """Add to the invocation's metric set; nothing when metrics are off. Powertools keeps
    a disabled set instead of clearing it at the flush, and prints it once a metric holds
    100 values, whatever the setting: the local runs' output got EMF lines every 100
    events."""
    if enabled():
        metrics.add_metric(name=name, unit=unit, value=value)


def count(name: str, value: float = 1) -> None:
    _add(name, MetricUnit.Count, value)


def seconds(name: str, value: float) -> None:
    _add(name, MetricUnit.Seconds, value)


def spend(name: str, usd: Decimal, dimension: str, value: str) -> None:
    """A USD figure with one dimension (CloudWatch has no currency unit: "None")."""
    if is_metrics_disabled():  # single_metric flushes on its own, whatever the setting
        return
    # EMF carries numbers as JSON floats: display only, no money is computed from it.
    with single_metric(
        name=name, unit=MetricUnit.NoUnit, value=float(usd), namespace=NAMESPACE
    ) as metric:
        metric.add_dimension(name=dimension, value=value)


def by_team(name: str, value: Decimal, unit: MetricUnit, team: str) -> None:
    """A figure with the ``team`` dimension only (values bounded by the caller)."""
    if is_metrics_disabled():
        return
    with single_metric(name=name, unit=unit, value=float(value), namespace=NAMESPACE) as metric:
        metric.add_dimension(name="team", value=team)


def gauge(name: str, value: float, unit: MetricUnit = MetricUnit.Count) -> None:
    """A level (not a count of happenings) with the service dimension."""
    _add(name, unit, value)


def day_figures(figures: DayFigures) -> None:
    """A day's accelerator-hours and utilization per team, and checkpoint storage."""
    for team, team_figures in figures.teams.items():
        by_team("AcceleratorHours", team_figures.accelerator_hours, MetricUnit.NoUnit, team)
        utilization = team_figures.utilization_percent
        if utilization is not None:
            by_team("AcceleratorUtilization", utilization, MetricUnit.Percent, team)
    gauge("CheckpointStorageGB", float(figures.checkpoint_storage_gb), MetricUnit.Gigabytes)


# Running accelerators by condition (ops_metrics.accelerators_by_condition) -> metric name.
CONDITION_METRICS = {
    "idle": "IdleAccelerators",
    "input_bound": "InputBoundAccelerators",
    "no_metrics": "UnmeasuredAccelerators",
    "other": "OtherRunningAccelerators",
}


def accelerator_conditions(counts: Mapping[str, int]) -> None:
    for condition, name in CONDITION_METRICS.items():
        gauge(name, counts.get(condition, 0))
