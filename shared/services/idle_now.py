"""Accelerators that are idle (or input-bound) right now: since when, and what that
stretch has cost so far. Pure: instance records in, rows out."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal
from typing import Any

from shared.costing import classify, cost_inside, instance_cost
from shared.models import InstanceRecord
from shared.services.change import is_accelerator
from shared.views import iso, money

IDLE_CONDITIONS = ("idle", "input_bound")


def idle_now(records: Iterable[InstanceRecord], now: datetime) -> list[dict[str, Any]]:
    """Running accelerator instances whose alarms call them idle (accelerator and CPU low)
    or input-bound (accelerator low, CPU busy) now; most costly first."""
    rows = []
    for record in records:
        if not is_accelerator(record.profile.instance_type):
            continue
        cost = instance_cost(record, now)
        if cost.running_since is None:
            continue
        condition, since = classify(record)
        if condition not in IDLE_CONDITIONS or since is None:
            continue
        since = max(since, cost.running_since)
        wasted = cost_inside([cost], [(since, now)], now)
        rows.append(
            {
                "instance_id": record.instance_id,
                "instance_type": record.profile.instance_type,
                "job_id": record.job_id,
                "condition": condition,
                "since": iso(since),
                "idle_seconds": int((now - since).total_seconds()),
                "cost_usd": money(wasted),
                "burn_rate_usd_per_hour": money(cost.hourly_rate_usd),
            }
        )
    return sorted(rows, key=lambda r: (-Decimal(r["cost_usd"]), r["instance_id"]))
