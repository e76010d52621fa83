"""The hours a read asks about. Which are closed already (``UtilizationStore.closed_hours``):
an instance asked for one hour is read by key, all such keys in one batch; one asked for
more in one Query over their range; either way the answer is each asked hour's own item's.
Which an instance ran in (``hours_run``), and its spans inside the hour an hourly read
reads (``running_spans(within=...)``)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from shared.adapters.table import MemoryTable
from shared.adapters.utilization_store import InstanceHour, UtilizationStore, hour_sk, util_pk
from shared.domain.clock import whole_seconds
from shared.domain.utilization import HOUR, Measured, Point, hours_run, measure
from shared.services.metric_reads import running_spans

T0 = datetime(2026, 11, 1, tzinfo=UTC)
ACCOUNT = "111122223333"


def _store_with(hours: dict[tuple[str, datetime], bool]) -> tuple[MemoryTable, UtilizationStore]:
    """(instance, hour) -> closed, each recorded once (an open one, then maybe closed)."""
    table = MemoryTable()
    store = UtilizationStore(table)
    for (instance_id, hour), closed in hours.items():
        measured = Measured(covered_seconds=60)
        store.record(ACCOUNT, instance_id, "job", hour, measured, closed=False, read_at=hour)
        if closed:
            store.record(ACCOUNT, instance_id, "job", hour, measured, closed=True, read_at=hour)
    return table, store


def _closed_by_key(table: MemoryTable, instance_id: str, hour: datetime) -> bool:
    item = table.items.get((util_pk(ACCOUNT, instance_id), hour_sk(hour)))
    return item is not None and int(item["closed"]) == 1


def test_single_hours_are_read_in_one_batch_and_ranges_by_one_query_each() -> None:
    h = [T0 + n * HOUR for n in range(5)]
    table, store = _store_with(
        {("i-a", h[0]): True, ("i-a", h[1]): False, ("i-b", h[1]): True, ("i-c", h[2]): True}
    )
    before = dict(table.calls)
    closed = store.closed_hours(
        [
            (ACCOUNT, "i-a", [h[0], h[1], h[2]]),
            (ACCOUNT, "i-b", [h[1]]),
            (ACCOUNT, "i-b", [h[1]]),  # the same instance in two jobs: asked once
            (ACCOUNT, "i-c", [h[3]]),  # i-c's closed hour is not the one asked
            (ACCOUNT, "i-d", [h[4]]),  # nothing stored
            (ACCOUNT, "i-e", []),
        ]
    )
    assert closed == {(ACCOUNT, "i-a", h[0]), (ACCOUNT, "i-b", h[1])}
    calls = {k: v - before.get(k, 0) for k, v in table.calls.items() if v - before.get(k, 0)}
    assert calls == {"query": 1, "batch_get": 1}


def test_nothing_asked_reads_nothing() -> None:
    table, store = _store_with({})
    assert store.closed_hours([]) == set()
    assert table.calls == {}


def test_the_answer_is_each_asked_hours_own_item() -> None:
    """Random hours stored open or closed, random asks (contiguous or not, one or many):
    an hour is in the answer exactly when its own item is closed."""
    rng = random.Random(20261101)
    instances = [f"i-{n}" for n in range(6)]
    hours = [T0 + n * HOUR for n in range(30)]
    stored = {(i, h): rng.random() < 0.6 for i in instances for h in hours if rng.random() < 0.7}
    table, store = _store_with(stored)
    for _ in range(50):
        asks = []
        for instance_id in rng.sample(instances, rng.randint(1, len(instances))):
            window = hours[rng.randrange(len(hours) - 3) :][:24]
            asked = sorted(rng.sample(window, rng.randint(0, 3)))
            asks.append((ACCOUNT, instance_id, asked))
        expected = {
            (ACCOUNT, i, h) for _, i, asked in asks for h in asked if _closed_by_key(table, i, h)
        }
        assert store.closed_hours(asks) == expected


class _Span:
    def __init__(self, start: datetime, end: datetime | None) -> None:
        self.start, self.end = start, end


class _Segment:
    def __init__(self, start: datetime, end: datetime | None) -> None:
        self.span = _Span(start, end)


def test_running_spans_within_an_hour_keep_only_the_spans_that_overlap_it() -> None:
    now = T0 + timedelta(hours=10, minutes=20)
    segments = [
        _Segment(T0, T0 + timedelta(hours=2)),
        _Segment(T0 + timedelta(hours=3), T0 + timedelta(hours=9)),  # ends as the hour begins
        _Segment(T0 + timedelta(hours=9, minutes=30), T0 + timedelta(hours=9, minutes=40)),
        _Segment(T0 + timedelta(hours=9, minutes=30), T0 + timedelta(hours=9, minutes=40)),
        _Segment(T0 + timedelta(hours=9, minutes=50), None),  # open: up to now
        _Segment(T0 + timedelta(hours=10), T0 + timedelta(hours=10)),  # empty
    ]
    hour = (T0 + timedelta(hours=9), T0 + timedelta(hours=10))
    every = running_spans(segments, now)  # type: ignore[arg-type]
    assert running_spans(segments, now, within=hour) == [  # type: ignore[arg-type]
        (a, b) for a, b in every if a < hour[1] and b > hour[0]
    ]
    assert running_spans(segments, now, within=hour) == [  # type: ignore[arg-type]
        (T0 + timedelta(hours=9, minutes=30), T0 + timedelta(hours=9, minutes=40)),
        (T0 + timedelta(hours=9, minutes=50), now),
    ]


def test_hours_run_are_the_hours_that_any_span_touches() -> None:
    """Against the definition, over random spans and bounds (not on the hour too)."""
    rng = random.Random(11)
    for _ in range(300):
        spans = []
        for _ in range(rng.randint(0, 6)):
            start = T0 + timedelta(minutes=rng.randrange(0, 48 * 60))
            spans.append((start, start + timedelta(minutes=rng.randrange(0, 6 * 60))))
        lo = T0 + timedelta(minutes=rng.randrange(0, 40 * 60))
        hi = lo + timedelta(minutes=rng.randrange(0, 30 * 60))
        first = lo.replace(minute=0)
        every = [first + n * HOUR for n in range(60) if first + n * HOUR < hi]
        expected = [h for h in every if any(s < h + HOUR and e > h for s, e in spans)]
        assert hours_run(spans, lo, hi) == expected


def _measure_on_datetimes(
    points: list[Point],
    period_seconds: int,
    running: list[tuple[datetime, datetime]],
    hour: datetime,
) -> Measured:
    """``measure`` by its definition: ``whole_seconds`` of each point's overlaps."""
    end = hour + HOUR
    inside = [(max(s, hour), min(e, end)) for s, e in running if s < end and e > hour]
    weighted, covered = Decimal(0), 0
    step = timedelta(seconds=period_seconds)
    for point in sorted(points, key=lambda p: p.at):
        lo, hi = max(point.at, hour), min(point.at + step, end)
        seconds = sum(whole_seconds(max(lo, s), min(hi, e)) for s, e in inside)
        weighted += point.value * seconds
        covered += seconds
    return Measured(weighted, covered)


def test_measure_counts_the_whole_seconds_of_each_points_overlaps() -> None:
    """Random points (off the second too), spans and hours: the same sums, digit for digit."""
    rng = random.Random(7)

    def moment() -> datetime:
        return T0 + timedelta(
            seconds=rng.randrange(0, 4 * 3600), microseconds=rng.choice([0, 1, 500_000, 999_999])
        )

    for _ in range(400):
        hour = T0 + timedelta(hours=rng.randrange(0, 3), microseconds=rng.choice([0, 0, 250_000]))
        period = rng.choice([1, 10, 60, 300])
        values = [
            Decimal("0.875"),
            Decimal("1.000"),
            Decimal("0"),
            Decimal("0.3333"),
            Decimal("-0.000"),
        ]
        points = [Point(moment(), rng.choice(values)) for _ in range(rng.randint(0, 15))]
        running = []
        for _ in range(rng.randint(0, 4)):
            start = moment()
            running.append(
                (
                    start,
                    start
                    + timedelta(
                        seconds=rng.randrange(0, 7200), microseconds=rng.randrange(0, 10**6)
                    ),
                )
            )
        got = measure(points, period, running, hour)
        expected = _measure_on_datetimes(points, period, running, hour)
        assert (str(got.weighted), got.covered_seconds) == (
            str(expected.weighted),
            expected.covered_seconds,
        )


def test_one_read_for_many_instances_writes_what_a_record_per_instance_writes() -> None:
    """``record_read`` (the hour's texts formatted once) against ``record`` one by one:
    the same items, the same answers, for an open read, a closing one and a repeat."""
    hour, later = T0 + HOUR, T0 + 2 * HOUR + timedelta(minutes=20)
    reads = [
        (T0 + HOUR + timedelta(minutes=5), False),
        (later, True),
        (later, True),  # closed already: nothing written
    ]
    measured = [
        InstanceHour(ACCOUNT, "i-1", "job-a", Measured(Decimal("12.5"), 60)),
        InstanceHour(ACCOUNT, "i-2", "job#b", Measured(Decimal("0"), 0)),
        InstanceHour("444455556666", "i-1", "job-a", Measured(Decimal("0.875"), 3600)),
    ]
    one_by_one, batched = MemoryTable(), MemoryTable()
    for read_at, closed in reads:
        answers = [
            UtilizationStore(one_by_one).record(
                m.account, m.instance_id, m.job_id, hour, m.measured, closed=closed, read_at=read_at
            )
            for m in measured
        ]
        assert UtilizationStore(batched).record_read(hour, read_at, closed, measured) == answers
        assert batched.items == one_by_one.items
    assert answers == [False, False, False]
