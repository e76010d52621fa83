"""GetMetricData calls and queries per instance-day (cost rule 10), measured on the real
read path (``shared.services.metric_reads`` and its adapter over the in-memory ledger
table) against a CloudWatch twin that counts what it is asked and answers an hour of
five-minute datapoints per instance.

One simulated UTC day: ``instances`` run all day in one account and region and a share
of them (``stopping``) stop at 12:30 and start again at 14:10 (their 12:00 hour is read
by the daily summary, not by the hourly read at 13:20, which sees only running
instances). The
hourly read runs at :20 past, the daily summary's re-read at 00:15 the next day.

``python -m bench.metric_reads [--instances 10,100,1000] [--stopping 0.1]``
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from shared.adapters.metric_reads import CloudWatchMetrics
from shared.adapters.table import MemoryTable
from shared.adapters.utilization_store import UtilizationStore
from shared.config.ledger import LedgerConfig
from shared.domain.instance import InstanceHead, InstanceProfile
from shared.services.metric_reads import Target, read_hours

DAY = datetime(2026, 11, 2, tzinfo=UTC)
GET_METRIC_DATA_USD_PER_1K_METRICS = 0.01  # us-east-1 list price (documentation, 2026-11)


class CountingCloudWatch:
    """Answers every query with 12 datapoints of 50 % in the asked hour; counts calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.queries = 0

    def get_paginator(self, name: str) -> CountingCloudWatch:
        return self

    def client_for(self, service: str, account: str = "", region: str = "") -> Any:
        return self

    def paginate(self, **request: Any) -> Iterator[dict[str, Any]]:
        self.calls += 1
        queries = request["MetricDataQueries"]
        self.queries += len(queries)
        start: datetime = request["StartTime"]
        stamps = [start + timedelta(minutes=5 * k) for k in range(12)]
        yield {
            "MetricDataResults": [
                {"Id": q["Id"], "Label": "", "Timestamps": stamps, "Values": [50.0] * 12}
                for q in queries
            ]
        }


def _head(n: int) -> InstanceHead:
    profile = InstanceProfile(
        instance_id=f"i-{n:017x}",
        instance_type="trn1.32xlarge",
        region="us-east-1",
        lifecycle="on-demand",
        tags={"training-job": f"job-{n // 4}"},
    )
    return InstanceHead(profile=profile, job_id=f"job-{n // 4}")


def measure(instances: int, stopping: float = 0.1) -> dict[str, Any]:
    config = LedgerConfig(live_prices=False)
    table = MemoryTable()
    store = UtilizationStore(table)
    cloudwatch = CountingCloudWatch()
    metrics = CloudWatchMetrics(cloudwatch)
    heads = [_head(n) for n in range(instances)]
    stops = set(range(math.floor(instances * stopping)))
    whole = [(DAY - timedelta(hours=1), DAY + timedelta(days=1, hours=1))]
    gap = [(DAY - timedelta(hours=1), DAY + timedelta(hours=12, minutes=30)),
           (DAY + timedelta(hours=14, minutes=10), DAY + timedelta(days=1, hours=1))]  # fmt: skip
    spans = {h.instance_id: gap if n in stops else whole for n, h in enumerate(heads)}
    started = time.perf_counter()
    for hour in range(24):
        now = DAY + timedelta(hours=hour + 1, minutes=20)
        running = [
            Target(h, spans[h.instance_id])
            for h in heads
            if any(s <= now < e for s, e in spans[h.instance_id])
        ]
        _read_last(config, store, metrics, running, now)
    hourly_calls = cloudwatch.calls
    hourly_queries = cloudwatch.queries
    summary_at = DAY + timedelta(days=1, minutes=15)
    targets = [Target(h, spans[h.instance_id]) for h in heads]
    reread = read_hours(config, store, metrics, targets, DAY, DAY + timedelta(days=1), summary_at)
    elapsed = time.perf_counter() - started
    calls, queries = cloudwatch.calls, cloudwatch.queries
    return {
        "instances": instances,
        "stopping_share": stopping,
        "hourly_calls": hourly_calls,
        "hourly_queries": hourly_queries,
        "daily_reread_calls": calls - hourly_calls,
        "daily_reread_queries": queries - hourly_queries,
        "daily_reread_hours_already_closed": reread.already_closed,
        "calls_per_instance_day": calls / instances,
        "queries_per_instance_day": queries / instances,
        "usd_per_instance_month": queries
        / instances
        * 730
        / 24
        * GET_METRIC_DATA_USD_PER_1K_METRICS
        / 1000,
        "table_requests": dict(table.calls),
        "seconds": elapsed,
    }


def _read_last(
    config: LedgerConfig,
    store: UtilizationStore,
    metrics: CloudWatchMetrics,
    running: list[Target],
    now: datetime,
) -> None:
    """The hourly read over the running instances with their full spans."""
    end = (now - timedelta(minutes=15)).replace(minute=0, second=0, microsecond=0)
    read_hours(config, store, metrics, running, end - timedelta(hours=1), end, now)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", default="10,100")
    parser.add_argument("--stopping", type=float, default=0.1)
    args = parser.parse_args()
    rows = [measure(int(n), args.stopping) for n in args.instances.split(",")]
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
