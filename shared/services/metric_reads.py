"""Reading measured utilization (cost rule 10) into hourly aggregates per instance.

One GetMetricData query per instance of the instance's configured accelerator metric,
asked in the instance's own account and region, up to 500 to a call: one call per
account, region and hour, or, for the daily summary's re-reads of several hours, one
for all of them, split by hour. An hour is closed, and kept for good, only when read 15
minutes or more after it ended; an earlier read is kept as open and made again later:
hourly (``read_last_hour``, at :20 past, so the hour is closed on its first read) and,
for whatever that missed (an instance that stopped in the hour, a failed read), with
the daily summary (``read_hours`` of the day's jobs). A job view reads only what is
stored: each instance's total, in the job's partition (``shared.services.job_view``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from aws_lambda_powertools import Logger

from shared.adapters.metric_reads import CloudWatchMetrics, MetricQuery
from shared.adapters.utilization_store import InstanceHour, UtilizationStore
from shared.config.ledger import LedgerConfig
from shared.config.measurement import AcceleratorKind
from shared.domain.instance import InstanceHead
from shared.domain.job import JobRecords
from shared.domain.segments import SegmentCost
from shared.domain.utilization import (
    HOUR,
    AcceleratorUse,
    Point,
    Spans,
    device_mean,
    hours_run,
    measure,
    running_seconds,
)

logger = Logger(service="costtracker", child=True)
CLOSE_AFTER = timedelta(minutes=15)


# What a MetricQuery holds besides the instance: namespace, metric, dimension, period
# and the device dimensions (the same for every instance of a type).
MetricOfType = tuple[str, str, str, int, tuple[str, ...]]


def metric_of_type(config: LedgerConfig, instance_type: str) -> MetricOfType | None:
    """The accelerator metric of an instance type (None for a CPU node)."""
    utilization, measurement = config.utilization, config.measurement
    ref = utilization.accelerator_metric(instance_type)
    if ref is None:
        return None
    kind: AcceleratorKind = "neuron" if ref is utilization.neuron else "gpu"
    return (
        ref.namespace,
        ref.metric,
        ref.dimension,
        measurement.period_seconds,
        measurement.device_dimensions.get(kind, ()),
    )


def query_for(config: LedgerConfig, instance_id: str, instance_type: str) -> MetricQuery | None:
    """The accelerator metric of an instance (None for a CPU node)."""
    metric = metric_of_type(config, instance_type)
    return None if metric is None else MetricQuery(instance_id, *metric)


def running_spans(
    segments: Iterable[SegmentCost],
    now: datetime,
    within: tuple[datetime, datetime] | None = None,
) -> list[tuple[datetime, datetime]]:
    """Each running segment as [start, end) (an open one up to ``now``), each once; with
    ``within`` (lo, hi), only those that overlap [lo, hi)."""
    if within is None:
        seen = {(s.span.start, s.span.end or now) for s in segments}
        return sorted((a, b) for a, b in seen if a < b)
    lo, hi = within
    overlapping: set[tuple[datetime, datetime]] = set()
    for segment in segments:  # a plain loop: most of a week's segments ended before lo
        span = segment.span
        end = now if span.end is None else span.end
        if end > lo and span.start < hi:
            overlapping.add((span.start, end))
    return sorted((a, b) for a, b in overlapping if a < b)


def closes_at(hour: datetime) -> datetime:
    return hour + HOUR + CLOSE_AFTER


@dataclass
class ReadOutcome:
    hours_read: int = 0
    hours_closed: int = 0
    already_closed: int = 0
    failed: list[str] = field(default_factory=list)  # "account/region: reason"


@dataclass(frozen=True)
class Target:
    """An instance to read, with its running spans."""

    head: InstanceHead
    spans: Spans


def read_hours(
    config: LedgerConfig,
    store: UtilizationStore,
    metrics: CloudWatchMetrics,
    targets: Sequence[Target],
    lo: datetime,
    hi: datetime,
    now: datetime,
) -> ReadOutcome:
    """Read every hour in [lo, min(hi, now)) in which a target ran and that is not closed
    yet; one account or region that fails is reported and never stops the others."""
    outcome = ReadOutcome()
    metric_of: dict[str, MetricOfType | None] = {}  # per instance type, made once
    asked: list[tuple[MetricQuery, Target, list[datetime]]] = []
    until = min(hi, now)
    for target in targets:
        profile = target.head.profile
        instance_type = profile.instance_type
        if instance_type not in metric_of:
            metric_of[instance_type] = metric_of_type(config, instance_type)
        metric = metric_of[instance_type]
        if metric is None:
            continue
        hours = hours_run(target.spans, lo, until)
        asked.append((MetricQuery(profile.instance_id, *metric), target, hours))
    kept = store.closed_hours([(t.head.account, t.head.instance_id, h) for _, t, h in asked])
    wanted: dict[tuple[str, str, datetime], list[tuple[MetricQuery, Target]]] = {}
    for query, target, hours in asked:
        head = target.head
        for hour in hours:
            if (head.account, head.instance_id, hour) in kept:
                outcome.already_closed += 1
                continue
            key = (head.account, head.profile.region, hour)
            wanted.setdefault(key, []).append((query, target))
    by_place: dict[tuple[str, str], dict[datetime, list[tuple[MetricQuery, Target]]]] = {}
    for (account, region, hour), pairs in sorted(wanted.items(), key=lambda kv: kv[0]):
        by_place.setdefault((account, region), {})[hour] = pairs
    for (account, region), of_hour in by_place.items():
        if len(of_hour) > 1:  # the daily summary's re-reads: one call for the hours
            _read_span(store, metrics, (account, region), of_hour, now, outcome)
            continue
        for hour, pairs in of_hour.items():
            for batch in _one_per_instance(pairs):
                _read_batch(store, metrics, (account, region, hour), batch, now, outcome)
    return outcome


def _read_span(
    store: UtilizationStore,
    metrics: CloudWatchMetrics,
    place: tuple[str, str],
    hours: dict[datetime, list[tuple[MetricQuery, Target]]],
    now: datetime,
    outcome: ReadOutcome,
) -> None:
    """Several hours of one account and region in one call per 500 instances (each
    instance's query once), recorded hour by hour as ``_read_batch`` records one (an
    instance in two jobs in separate writes, as there)."""
    account, region = place
    queries = [query for pairs in hours.values() for query, _ in pairs]
    try:
        series = metrics.read_hours(account, region, min(hours), max(hours) + HOUR, queries)
    except Exception as exc:  # a role not assumable, a region off: report, go on
        _failed(outcome, account, region, exc)
        return
    for hour, pairs in hours.items():

        def in_hour(query: MetricQuery, hour: datetime = hour) -> list[list[Point]]:
            return series[query].get(hour, [])

        for batch in _one_per_instance(pairs):
            _record(store, hour, batch, in_hour, now, outcome)


def _one_per_instance(
    pairs: list[tuple[MetricQuery, Target]],
) -> list[list[tuple[MetricQuery, Target]]]:
    """The pairs in as few batches as can be with each instance once in a batch (an
    instance in two jobs of one day: its series are per query, the answer per instance)."""
    if len({query.instance_id for query, _ in pairs}) == len(pairs):
        return [pairs]  # each instance once (nearly always): one batch
    batches: list[list[tuple[MetricQuery, Target]]] = []
    seen: list[set[str]] = []
    for pair in pairs:
        instance_id = pair[0].instance_id
        at = next((n for n, ids in enumerate(seen) if instance_id not in ids), len(seen))
        if at == len(seen):
            batches.append([])
            seen.append(set())
        batches[at].append(pair)
        seen[at].add(instance_id)
    return batches


def _read_batch(
    store: UtilizationStore,
    metrics: CloudWatchMetrics,
    where: tuple[str, str, datetime],
    pairs: list[tuple[MetricQuery, Target]],
    now: datetime,
    outcome: ReadOutcome,
) -> None:
    account, region, hour = where
    try:
        series = metrics.read_hour(account, region, hour, [q for q, _ in pairs])
    except Exception as exc:  # a role not assumable, a region off: report, go on
        _failed(outcome, account, region, exc)
        return
    _record(store, hour, pairs, lambda q: series[q.instance_id], now, outcome)


def _failed(outcome: ReadOutcome, account: str, region: str, exc: Exception) -> None:
    logger.warning(
        "GetMetricData failed",
        extra={"account": account, "region": region, "error": str(exc)},
    )
    outcome.failed.append(f"{account}/{region}: {type(exc).__name__}")


def _record(
    store: UtilizationStore,
    hour: datetime,
    pairs: list[tuple[MetricQuery, Target]],
    series_of: Callable[[MetricQuery], list[list[Point]]],
    now: datetime,
    outcome: ReadOutcome,
) -> None:
    """One hour's reads of ``pairs`` measured and stored (closed if read late enough)."""
    closed = now >= closes_at(hour)
    measured = [
        InstanceHour(
            target.head.account,
            query.instance_id,
            target.head.job_id,
            measure(device_mean(series_of(query)), query.period_seconds, target.spans, hour),
        )
        for query, target in pairs
    ]
    written = store.record_read(hour, now, closed, measured)
    outcome.hours_read += len(written)
    if closed:
        outcome.hours_closed += sum(written)


def read_last_hour(
    config: LedgerConfig,
    store: UtilizationStore,
    metrics: CloudWatchMetrics,
    open_heads: Iterable[InstanceHead],
    now: datetime,
) -> ReadOutcome:
    """Hourly: the last hour that can be closed now, for every running instance."""
    end = (now - CLOSE_AFTER).replace(minute=0, second=0, microsecond=0)
    hour = (end - HOUR, end)  # only spans in the hour matter: a week's are many
    targets = [Target(h, running_spans(h.segments, now, within=hour)) for h in open_heads]
    return read_hours(config, store, metrics, targets, *hour, now)


def job_targets(records: JobRecords, now: datetime) -> list[Target]:
    """The job's instances with the running spans its loaded records hold."""
    by_instance: dict[str, list[SegmentCost]] = {}
    for segment in records.all_segments():
        by_instance.setdefault(segment.instance_id, []).append(segment)
    return [
        Target(h, running_spans(by_instance.get(h.instance_id, []), now)) for h in records.heads
    ]


def day_reader(
    config: LedgerConfig,
    store: UtilizationStore,
    metrics: CloudWatchMetrics,
    start: datetime,
    end: datetime,
    now: datetime,
) -> Callable[[Sequence[JobRecords]], None]:
    """For the daily summary's walk (``summarize_day(each_batch=...)``): read the hours of
    the day that are not closed yet of a batch of jobs at once (one call per account,
    region and hour for the batch, not per job), before the day's figures are made."""

    def read(batch: Sequence[JobRecords]) -> None:
        targets = [t for records in batch for t in job_targets(records, now)]
        read_hours(config, store, metrics, targets, start, end, now)

    return read


class DayMeasurement:
    """Rule 10's figures of one day over every job's accelerator instances: running
    seconds inside the day, and the day's stored hours (one Query per instance)."""

    def __init__(
        self, config: LedgerConfig, store: UtilizationStore, start: datetime, end: datetime
    ) -> None:
        self._config = config
        self._store = store
        self._bounds = (start, end)
        self.use = AcceleratorUse()

    def add(self, records: JobRecords, now: datetime) -> None:
        start, end = self._bounds
        counts = self._config.measurement.accelerator_counts
        for target in job_targets(records, now):
            head = target.head
            instance_type = head.profile.instance_type
            if self._config.utilization.accelerator_metric(instance_type) is None:
                continue
            seconds = running_seconds([(max(s, start), min(e, end)) for s, e in target.spans])
            if seconds:
                measured = self._store.between(head.account, head.instance_id, start, end)
                self.use.add(instance_type, counts.get(instance_type), seconds, measured)

    def view(self) -> dict[str, object]:
        from shared.reports.views import fraction_view, maybe_money

        use = self.use
        return {
            "accelerator_seconds": None if use.unknown_types else use.accelerator_seconds,
            "accelerator_counts_unknown": sorted(use.unknown_types),
            "utilization": fraction_view(use.utilization),
            "utilization_measured_share": fraction_view(use.measured_share),
            "effective_accelerator_hours": maybe_money(use.effective_accelerator_hours),
        }
