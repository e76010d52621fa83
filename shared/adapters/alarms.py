"""The only CloudWatch alarm code: per-instance utilization alarms, made and removed
as instances start and stop (event-driven; no polling loop)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from shared.config.ledger import MetricRef, UtilizationConfig


@dataclass(frozen=True)
class AlarmSpec:
    name: str
    metric: MetricRef
    instance_id: str
    threshold: float
    signal: str


def alarm_specs(config: UtilizationConfig, instance_id: str, instance_type: str) -> list[AlarmSpec]:
    """The two alarms of an accelerator instance (none for a CPU-only node)."""
    accelerator = config.accelerator_metric(instance_type)
    if accelerator is None:
        return []
    prefix = f"{config.alarm_prefix}{instance_id}"
    return [
        AlarmSpec(
            f"{prefix}-accelerator-low",
            accelerator,
            instance_id,
            config.accelerator_low_percent,
            "accelerator",
        ),
        AlarmSpec(f"{prefix}-cpu-low", config.cpu, instance_id, config.cpu_low_percent, "cpu"),
    ]


class AlarmManager(Protocol):
    def ensure(self, specs: list[AlarmSpec], config: UtilizationConfig) -> None: ...

    def delete(self, names: list[str]) -> None: ...

    def managed(self, prefix: str) -> Iterator[str]:
        """Names of the alarms this product made (by prefix)."""


class CloudWatchAlarms:
    def __init__(self, cloudwatch_client: Any) -> None:
        self._cw = cloudwatch_client

    def ensure(self, specs: list[AlarmSpec], config: UtilizationConfig) -> None:
        """PutMetricAlarm is an upsert: calling it again for the same name is harmless."""
        periods = max(1, config.window_minutes * 60 // config.period_seconds)
        for spec in specs:
            self._cw.put_metric_alarm(
                AlarmName=spec.name,
                AlarmDescription=(
                    f"costtracker: {spec.signal} utilization of {spec.instance_id} below "
                    f"{spec.threshold:g} % for {config.window_minutes} min"
                ),
                Namespace=spec.metric.namespace,
                MetricName=spec.metric.metric,
                Dimensions=[{"Name": spec.metric.dimension, "Value": spec.instance_id}],
                Statistic="Average",
                Period=config.period_seconds,
                EvaluationPeriods=periods,
                DatapointsToAlarm=periods,
                Threshold=spec.threshold,
                ComparisonOperator="LessThanThreshold",
                # No data is "not measured", never 0 %: the alarm goes to INSUFFICIENT_DATA.
                TreatMissingData="missing",
                ActionsEnabled=False,  # state changes reach us through EventBridge
                Tags=[{"Key": "costtracker:instance-id", "Value": spec.instance_id}],
            )

    def delete(self, names: list[str]) -> None:
        for start in range(0, len(names), 100):  # DeleteAlarms takes 100 names at most
            self._cw.delete_alarms(AlarmNames=names[start : start + 100])

    def managed(self, prefix: str) -> Iterator[str]:
        paginator = self._cw.get_paginator("describe_alarms")
        for page in paginator.paginate(AlarmNamePrefix=prefix, AlarmTypes=["MetricAlarm"]):
            for alarm in page.get("MetricAlarms", []):
                yield alarm["AlarmName"]
