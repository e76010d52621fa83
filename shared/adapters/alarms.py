"""The only CloudWatch alarm code: per-instance utilization alarms, made and removed
as instances start and stop (event-driven; no polling loop), each in its instance's own
account and region (where its metrics are), through the one client factory
(``shared.adapters.accounts``; a plain client serves every account as it is)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from shared.adapters.accounts import factory_of
from shared.config.ledger import MetricRef, UtilizationConfig
from shared.domain.alarm_record import AlarmIdentity, threshold_of
from shared.domain.idle import Signal
from shared.domain.memo import ByIdentity

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
        return _made_from(config).identity(self)

    def put_request(self, config: UtilizationConfig) -> dict[str, Any]:
        """The PutMetricAlarm request that makes this alarm (in its account and region)."""
        periods = max(1, config.window_minutes * 60 // config.period_seconds)
        return {
            "AlarmName": self.name,
            "AlarmDescription": (
                f"costtracker: {self.signal} utilization of {self.instance_id} below "
                f"{self.threshold:g} % for {config.window_minutes} min"
            ),
            "Namespace": self.metric.namespace,
            "MetricName": self.metric.metric,
            "Dimensions": [{"Name": self.metric.dimension, "Value": self.instance_id}],
            "Statistic": STATISTIC,
            "Period": config.period_seconds,
            "EvaluationPeriods": periods,
            "DatapointsToAlarm": periods,
            "Threshold": self.threshold,
            "ComparisonOperator": "LessThanThreshold",
            # No data is "not measured", never 0 %: the alarm goes to INSUFFICIENT_DATA.
            "TreatMissingData": "missing",
            "ActionsEnabled": False,  # state changes reach us through EventBridge
            "Tags": [{"Key": "costtracker:instance-id", "Value": self.instance_id}],
        }

    def definition(self, config: UtilizationConfig) -> str:
        """A digest of the whole request as put (account and region included): a record
        holding the same digest is an alarm put exactly so, with nothing to put again."""
        return _made_from(config).definition(self)


class _MadeFrom:
    """An instance's alarms are put at each start and deleted at each stop: the same
    specs, identities and digests each time, made once from one config object (by
    identity, not equality: equal configs may write a threshold as 10 or as 10.0)."""

    def __init__(self, config: UtilizationConfig) -> None:
        self.config = config
        self.specs: dict[tuple[str, str, str, str], tuple[AlarmSpec, ...]] = {}
        self.identity: ByIdentity[AlarmSpec, AlarmIdentity] = ByIdentity(self._identity)
        self.definition: ByIdentity[AlarmSpec, str] = ByIdentity(self._definition)

    def _identity(self, spec: AlarmSpec) -> AlarmIdentity:
        return AlarmIdentity(
            account=spec.account,
            region=spec.region,
            name=spec.name,
            namespace=spec.metric.namespace,
            metric=spec.metric.metric,
            dimensions=((spec.metric.dimension, spec.instance_id),),
            period=self.config.period_seconds,
            stat=STATISTIC,
            threshold=threshold_of(spec.threshold),
        )

    def _definition(self, spec: AlarmSpec) -> str:
        request = {"account": spec.account, "region": spec.region, **spec.put_request(self.config)}
        canonical = json.dumps(request, sort_keys=True, default=str, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:32]


_KEPT_INSTANCES = 4096
# A container has one config (a test may make many: each starts anew).
_made_from: ByIdentity[UtilizationConfig, _MadeFrom] = ByIdentity(_MadeFrom, size=4)


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
    specs = _made_from(config).specs
    key = (instance_id, instance_type, account, region)
    found = specs.get(key)
    if found is None:
        if len(specs) >= _KEPT_INSTANCES:
            specs.clear()
        found = specs[key] = _make_specs(config, *key)
    return list(found)


def _make_specs(
    config: UtilizationConfig, instance_id: str, instance_type: str, account: str, region: str
) -> tuple[AlarmSpec, ...]:
    accelerator = config.accelerator_metric(instance_type)
    if accelerator is None:
        return ()
    prefix = f"{config.alarm_prefix}{instance_id}"
    return (
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
    )


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
        for spec in specs:
            cw = self._clients.client_for("cloudwatch", spec.account, spec.region)
            cw.put_metric_alarm(**spec.put_request(config))

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
