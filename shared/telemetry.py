"""The tracker's own metrics (CloudWatch EMF through Powertools Metrics): events
processed and rejected, alerts sent, schedule lag, and daily spend by project/team."""

from __future__ import annotations

import warnings
from decimal import Decimal

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.metrics import MetricUnit, single_metric
from aws_lambda_powertools.metrics.functions import is_metrics_disabled

# A run with nothing to count (most schedule runs) is normal, not worth a warning.
warnings.filterwarnings("ignore", message="No application metrics to publish")

NAMESPACE = "CostTracker"
metrics = Metrics(namespace=NAMESPACE, service="costtracker")


def count(name: str, value: float = 1) -> None:
    metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)


def seconds(name: str, value: float) -> None:
    metrics.add_metric(name=name, unit=MetricUnit.Seconds, value=value)


def spend(name: str, usd: Decimal, dimension: str, value: str) -> None:
    """A USD figure with one dimension (CloudWatch has no currency unit: "None")."""
    if is_metrics_disabled():  # single_metric flushes on its own, whatever the setting
        return
    # EMF carries numbers as JSON floats: display only, no money is computed from it.
    with single_metric(
        name=name, unit=MetricUnit.NoUnit, value=float(usd), namespace=NAMESPACE
    ) as metric:
        metric.add_dimension(name=dimension, value=value)
