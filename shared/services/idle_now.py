"""Accelerators that are idle (or input-bound) right now: since when, and what that
stretch has cost so far. Instance heads in, rows out."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal
from typing import Any

from shared.domain.idle import classify
from shared.domain.instance import InstanceHead
from shared.domain.segments import SeriesReader, cost_inside
from shared.domain.spend_change import is_accelerator
from shared.reports.formatting import iso, money

IDLE_CONDITIONS = ("idle", "input_bound")


def idle_now(
    heads: Iterable[InstanceHead], now: datetime, series: SeriesReader | None
) -> list[dict[str, Any]]:
    """Running accelerator instances whose own alarms call them idle (accelerator and CPU
    low) or input-bound (accelerator low, CPU busy) now; most costly first."""
    rows = []
    for head in heads:
        segment = head.open_segment
        if segment is None or not is_accelerator(head.profile.instance_type):
            continue
        condition, since = classify(head.alarms, segment.span.start)
        if condition not in IDLE_CONDITIONS or since is None:
            continue
        since = max(since, segment.span.start)
        burn = Decimal(0)
        if segment.pin is not None and segment.pin.rate is not None:
            burn = segment.pin.rate.effective_usd
        elif segment.pin is not None and segment.pin.series and series is not None:
            burn = series.rate_at(segment.pin.series, now)
        rows.append(
            {
                "instance_id": head.instance_id,
                "instance_type": head.profile.instance_type,
                "job_id": head.job_id,
                "condition": condition,
                "since": iso(since),
                "idle_seconds": int((now - since).total_seconds()),
                "cost_usd": money(cost_inside(segment, since, now, series, list_price=False)),
                "burn_rate_usd_per_hour": money(burn),
            }
        )
    return sorted(rows, key=lambda r: (-Decimal(r["cost_usd"]), r["instance_id"]))
