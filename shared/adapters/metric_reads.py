"""GetMetricData for measured utilization (cost rule 10): one query per instance for an
hour or for several whole hours at once, up to 500 queries to a call (the API's limit),
statistic Average, paged with boto3's paginator. An instance-level metric is a
MetricStat; where the metric exists only per device, a ``SEARCH()`` per instance returns
one series per device (GPU index, NeuronCore) and the domain averages them
(``shared.domain.utilization.device_mean``).

Reads go through the instance's own account and region (``ClientFactory``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from shared.adapters.accounts import ClientFactory, factory_of
from shared.domain.utilization import HOUR, Point, fraction

MAX_QUERIES_PER_CALL = 500


@dataclass(frozen=True)
class MetricQuery:
    """The accelerator metric of one instance: instance-level, or per device when
    ``device_dimensions`` names the device dimensions."""

    instance_id: str
    namespace: str
    metric: str
    dimension: str
    period_seconds: int
    device_dimensions: tuple[str, ...] = ()

    def request(self, query_id: str) -> dict[str, Any]:
        if self.device_dimensions:
            schema = ",".join((_quoted(self.namespace), self.dimension, *self.device_dimensions))
            search = (
                f"{{{schema}}} MetricName={_quoted(self.metric)} "
                f"{self.dimension}={_quoted(self.instance_id)}"
            )
            expression = f"SEARCH('{search}', 'Average', {self.period_seconds})"
            return {"Id": query_id, "Expression": expression, "ReturnData": True}
        metric = {
            "Namespace": self.namespace,
            "MetricName": self.metric,
            "Dimensions": [{"Name": self.dimension, "Value": self.instance_id}],
        }
        return {
            "Id": query_id,
            "MetricStat": {"Metric": metric, "Period": self.period_seconds, "Stat": "Average"},
            "ReturnData": True,
        }


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


class CloudWatchMetrics:
    """GetMetricData per (account, region, hour); ``calls`` counts the requests made (the
    self-cost model prices them: each query is a metric requested)."""

    def __init__(self, clients: ClientFactory | Any) -> None:
        self._clients = factory_of(clients)
        self.calls = 0
        self.queries = 0

    def read_hour(
        self, account: str, region: str, hour: datetime, queries: Sequence[MetricQuery]
    ) -> dict[str, list[list[Point]]]:
        """Per instance, its series inside [hour, hour + 1 h): one (instance-level) or one
        per device. An instance with no datapoint has an empty list."""
        by_hour = self.read_hours(account, region, hour, hour + HOUR, queries)
        return {q.instance_id: by_hour[q].get(hour, []) for q in queries}

    def read_hours(
        self,
        account: str,
        region: str,
        start: datetime,
        end: datetime,
        queries: Sequence[MetricQuery],
    ) -> dict[MetricQuery, dict[datetime, list[list[Point]]]]:
        """Per query, its series inside each hour of [start, end) (whole hours), one
        call for every 500 queries however many hours: GetMetricData is priced per
        metric asked, not per hour. An hour without a datapoint is absent."""
        client = self._clients.client_for("cloudwatch", account, region)
        queries = list(dict.fromkeys(queries))  # each once: one series set per query
        out: dict[MetricQuery, dict[datetime, list[list[Point]]]] = {q: {} for q in queries}
        for first in range(0, len(queries), MAX_QUERIES_PER_CALL):
            batch = queries[first : first + MAX_QUERIES_PER_CALL]
            ids = {f"q{n}": q for n, q in enumerate(batch)}
            requests = [q.request(query_id) for query_id, q in ids.items()]
            self.queries += len(requests)
            paginator = client.get_paginator("get_metric_data")
            series: dict[tuple[str, str], list[Point]] = {}
            for page in paginator.paginate(
                MetricDataQueries=requests,
                StartTime=start,
                EndTime=end,
                ScanBy="TimestampAscending",
            ):
                self.calls += 1
                for result in page.get("MetricDataResults", []):
                    timestamps, values = result["Timestamps"], result["Values"]
                    if not timestamps and not values:  # most queries of an idle hour
                        continue
                    key = (str(result["Id"]), str(result.get("Label", "")))
                    series.setdefault(key, []).extend(
                        Point(at, fraction(value))
                        for at, value in zip(timestamps, values, strict=True)
                    )
            for (query_id, _), points in sorted(series.items()):
                hours: dict[datetime, list[Point]] = {}
                for point in points:
                    hour = start + HOUR * ((point.at - start) // HOUR)
                    hours.setdefault(hour, []).append(point)
                into = out[ids[query_id]]
                for hour, in_hour in hours.items():
                    into.setdefault(hour, []).append(sorted(in_hour, key=lambda p: p.at))
        return out
