"""The only CloudWatch alarm code: per-instance utilization alarms, made and removed
as instances start and stop (event-driven; no polling loop), each in its instance's own
account and region (where its metrics are), through the one client factory
(``shared.adapters.accounts``; a plain client serves every account as it is)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from shared.adapters.accounts import factory_of
from shared.config.ledger import MetricRef, UtilizationConfig
from shared.domain.alarm_record import AlarmIdentity, threshold_of
from shared.domain.idle import Signal

STATISTIC = "Average"


@dataclass(frozen=True)
class AlarmSpec:
    name: str
    metric: MetricRef
    instance_id: str
    threshold: float
    signal: Signal
    account: str = ""  # the instance's (empty: the tracker's own)
    region: str = ""  # the instance's (empty: the function's own)

    def identity(self, config: UtilizationConfig) -> AlarmIdentity:
        """What the alarm's state-change events will name, as this spec puts it."""
        return AlarmIdentity(
            account=self.account,
            region=self.region,
            name=self.name,
            namespace=self.metric.namespace,
            metric=self.metric.metric,
            dimensions=((self.metric.dimension, self.instance_id),),
            period=config.period_seconds,
            stat=STATISTIC,
            threshold=threshold_of(self.threshold),
        )


def alarm_specs(
    config: UtilizationConfig,
    instance_id: str,
    instance_type: str,
    *,
    account: str = "",
    region: str = "",
) -> list[AlarmSpec]:
    """The two alarms of an accelerator instance (none for a CPU-only node), in its
    ``account`` and ``region``."""
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
            account,
            region,
        ),
        AlarmSpec(
            f"{prefix}-cpu-low",
            config.cpu,
            instance_id,
            config.cpu_low_percent,
            "cpu",
            account,
            region,
        ),
    ]


class AlarmManager(Protocol):
    def ensure(self, specs: list[AlarmSpec], config: UtilizationConfig) -> None: ...

    def delete(self, names: list[str], account: str = "", region: str = "") -> None: ...

    def managed(self, prefix: str, account: str = "", region: str = "") -> Iterator[str]:
        """Names of the alarms this product made (by prefix)."""


class CloudWatchAlarms:
    def __init__(self, cloudwatch: Any) -> None:
        self._clients = factory_of(cloudwatch)

    def ensure(self, specs: list[AlarmSpec], config: UtilizationConfig) -> None:
        """PutMetricAlarm (an upsert: calling it again for the same name is harmless), in
        each spec's account and region."""
        periods = max(1, config.window_minutes * 60 // config.period_seconds)
        for spec in specs:
            cw = self._clients.client_for("cloudwatch", spec.account, spec.region)
            cw.put_metric_alarm(
                AlarmName=spec.name,
                AlarmDescription=(
                    f"costtracker: {spec.signal} utilization of {spec.instance_id} below "
                    f"{spec.threshold:g} % for {config.window_minutes} min"
                ),
                Namespace=spec.metric.namespace,
                MetricName=spec.metric.metric,
                Dimensions=[{"Name": spec.metric.dimension, "Value": spec.instance_id}],
                Statistic=STATISTIC,
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

    def delete(self, names: list[str], account: str = "", region: str = "") -> None:
        cw = self._clients.client_for("cloudwatch", account, region)
        for start in range(0, len(names), 100):  # DeleteAlarms takes 100 names at most
            cw.delete_alarms(AlarmNames=names[start : start + 100])

    def managed(self, prefix: str, account: str = "", region: str = "") -> Iterator[str]:
        cw = self._clients.client_for("cloudwatch", account, region)
        paginator = cw.get_paginator("describe_alarms")
        for page in paginator.paginate(AlarmNamePrefix=prefix, AlarmTypes=["MetricAlarm"]):
            for alarm in page.get("MetricAlarms", []):
                yield alarm["AlarmName"]
