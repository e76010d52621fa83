"""A scenario's ``metrics`` (cost rule 10) put into the emulator's CloudWatch with moto's
PutMetricData, as published: each instance's configured accelerator metric (Neuron or
GPU by its family), instance-level, in the instance's own account and region."""

from __future__ import annotations

from typing import Any

from costtracker.scenario import Scenario
from shared.config.ledger import LedgerConfig

PUT_BATCH = 1000  # PutMetricData's limit of datapoints per request


def seed_metrics(emulator: Any, scenario: Scenario, config: LedgerConfig) -> int:
    """Put every datapoint; returns how many. A series of an instance the scenario does
    not describe is put in the scenario's account and region under the GPU metric unless
    its type says otherwise (no type: the GPU metric)."""
    specs = {i.instance_id: i for i in scenario.instances}
    put = 0
    for series in scenario.metrics:
        spec = specs.get(series.instance_id)
        ref = config.utilization.accelerator_metric(spec.instance_type) if spec else None
        ref = ref or config.utilization.gpu
        account = (spec.account if spec else None) or scenario.account
        region = (spec.region if spec else None) or scenario.region
        cloudwatch = emulator.client("cloudwatch", account, region)
        data = [
            {
                "MetricName": ref.metric,
                "Dimensions": [{"Name": ref.dimension, "Value": series.instance_id}],
                "Timestamp": point.t,
                "Value": float(point.v),
                "Unit": "Percent",
            }
            for point in series.points
        ]
        for first in range(0, len(data), PUT_BATCH):
            cloudwatch.put_metric_data(
                Namespace=ref.namespace, MetricData=data[first : first + PUT_BATCH]
            )
        put += len(data)
    return put
