"""A job's cumulative cost over time, split by component (for plotting). Pure."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from shared.costing import (
    ebs_cost_between,
    instance_cost,
    running_cost_between,
    storage_cost_between,
)
from shared.models import CheckpointObject, InstanceRecord
from shared.views import iso, money


def cumulative_points(
    records: Sequence[InstanceRecord],
    checkpoints: Sequence[CheckpointObject],
    start: datetime,
    now: datetime,
    points: int,
) -> list[dict[str, Any]]:
    """``points`` evenly spaced times from ``start`` to ``now``; at each, the cost accrued
    since the start: instance, EBS, checkpoint storage and their total (the total is the
    job's ``spend_between`` to that time: the last point equals the job's total)."""
    costs = [(record, instance_cost(record, now)) for record in records]
    before = start - timedelta(seconds=1)
    series = []
    for n in range(points):
        at = start + (now - start) * n / (points - 1) if points > 1 else now
        instance = sum(
            (running_cost_between(cost, before, at, now) for _, cost in costs), Decimal(0)
        )
        ebs = sum((ebs_cost_between(record, before, at, now) for record, _ in costs), Decimal(0))
        storage = sum(
            (storage_cost_between(obj, before, at, now) for obj in checkpoints), Decimal(0)
        )
        series.append(
            {
                "at": iso(at),
                "total_usd": money(instance + ebs + storage),
                "instance_usd": money(instance),
                "ebs_usd": money(ebs),
                "checkpoint_storage_usd": money(storage),
            }
        )
    return series
