"""Rule 10 (accelerator-hours, measured utilization) and rule 11 (warm-up), worked by
hand: the reads into hourly aggregates (a CloudWatch twin answering GetMetricData as the
API reference documents it), the stored hours, and the job's figures."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from shared.adapters.metric_reads import CloudWatchMetrics, MetricQuery
from shared.adapters.utilization_store import UtilizationStore, measured_total, total_key
from shared.config.ledger import LedgerConfig
from shared.domain.instance import InstanceProfile
from shared.domain.utilization import AcceleratorUse, Measured, Point, measure
from shared.reports.compare import compare_jobs
from shared.reports.views import job_summary
from shared.services.metric_reads import day_reader, job_targets, read_hours, read_last_hour
from tests.support import ACCOUNT, REGION, Ledger, Timeline, job_records, memory_ledger

T0 = datetime(2026, 11, 1, tzinfo=UTC)
A1, A2, A3 = "i-0a1000000000000a1", "i-0a1000000000000a2", "i-0a1000000000000a3"
GPU = "i-0b1000000000000b1"


def minutes(n: float) -> timedelta:
    return timedelta(minutes=n)


def every_5_min(start: datetime, n: int, percent: str) -> list[tuple[datetime, str]]:
    return [(start + minutes(5 * k), percent) for k in range(n)]


class FakeCloudWatch:
    """GetMetricData over datapoints given per instance (and device): a MetricStat's
    Average per period from StartTime; a SEARCH() returns one series per device."""

    def __init__(self) -> None:
        self.points: dict[str, dict[str, list[tuple[datetime, str]]]] = {}
        self.calls: list[dict[str, Any]] = []

    def put(self, instance_id: str, points: list[tuple[datetime, str]], device: str = "") -> None:
        self.points.setdefault(instance_id, {}).setdefault(device, []).extend(points)

    def get_paginator(self, name: str) -> FakeCloudWatch:
        assert name == "get_metric_data"
        return self

    def paginate(self, **request: Any) -> Iterator[dict[str, Any]]:
        self.calls.append(request)
        assert len(request["MetricDataQueries"]) <= 500
        results = []
        for query in request["MetricDataQueries"]:
            if "Expression" in query:
                found = re.search(r'InstanceId="([^"]+)"', query["Expression"])
                assert found and query["Expression"].startswith("SEARCH(")
                devices = self.points.get(found.group(1), {})
                period = int(query["Expression"].rsplit(",", 1)[1].strip(" )"))
            else:
                stat = query["MetricStat"]
                instance = stat["Metric"]["Dimensions"][0]["Value"]
                devices = {"": self.points.get(instance, {}).get("", [])}
                period = stat["Period"]
            for device, points in sorted(devices.items()):
                inside = [
                    (t, Decimal(v))
                    for t, v in points
                    if request["StartTime"] <= t < request["EndTime"]
                ]
                bins: dict[datetime, list[Decimal]] = {}
                for t, v in inside:
                    offset = (t - request["StartTime"]).total_seconds() // period * period
                    bins.setdefault(request["StartTime"] + timedelta(seconds=offset), []).append(v)
                results.append(
                    {
                        "Id": query["Id"],
                        "Label": device or "avg",
                        "Timestamps": sorted(bins),
                        "Values": [float(sum(bins[t]) / len(bins[t])) for t in sorted(bins)],
                        "StatusCode": "Complete",
                    }
                )
        yield {"MetricDataResults": results}


class Clients:
    def __init__(self, cloudwatch: FakeCloudWatch) -> None:
        self.cloudwatch = cloudwatch
        self.asked: list[tuple[str, str, str]] = []

    def client_for(self, service: str, account: str = "", region: str = "") -> Any:
        self.asked.append((service, account, region))
        return self.cloudwatch


def profile(instance_id: str, instance_type: str, job: str = "llm") -> InstanceProfile:
    return InstanceProfile(
        instance_id=instance_id,
        instance_type=instance_type,
        region=REGION,
        lifecycle="on-demand",
        tags={"training-job": job},
    )


def ledger_of(*profiles: InstanceProfile, config: LedgerConfig | None = None) -> Ledger:
    prices = {"ec2": {"trn1.32xlarge": "21.50", "trn1.2xlarge": "1.34375", "p4d.24xlarge": "20"}}
    base = config or LedgerConfig(live_prices=False)
    config = base.model_copy(update={"prices": base.prices.model_validate(prices)})
    return memory_ledger(*profiles, config=config, now=T0)


def read_all(ledger: Ledger, metrics: CloudWatchMetrics, job: str, now: datetime) -> None:
    ledger.clock.advance_to(now)
    records = job_records(ledger, job, T0)
    store = UtilizationStore(ledger.table)
    read_hours(ledger.deps.config, store, metrics, job_targets(records, now), T0, now, now)


def test_rule_10_by_hand_two_instances_measured_for_part_of_their_run_and_one_not() -> None:
    """A1 (16 chips) 80 % for its first hour, A2 (16 chips) 50 % for half of its second
    hour, A3 (1 chip) no datapoint; all three run 00:00-02:00 (7,200 s).
    covered 3,600 + 1,800 = 5,400 s of 21,600 running: share 0.25;
    utilization (0.8 x 3,600 + 0.5 x 1,800) / 5,400 = 0.7;
    accelerator-seconds 7,200 x (16 + 16 + 1) = 237,600 (66 accelerator-hours);
    effective accelerator-hours (0.8 x 3,600 x 16 + 0.5 x 1,800 x 16) / 3,600 = 16.8."""
    ledger = ledger_of(
        profile(A1, "trn1.32xlarge"), profile(A2, "trn1.32xlarge"), profile(A3, "trn1.2xlarge")
    )
    timeline = Timeline()
    for iid in (A1, A2, A3):
        timeline.run(iid, T0, T0 + timedelta(hours=2))
    timeline.apply(ledger)
    cloudwatch = FakeCloudWatch()
    cloudwatch.put(A1, every_5_min(T0, 12, "80"))
    cloudwatch.put(A2, every_5_min(T0 + timedelta(hours=1), 6, "50"))
    clients = Clients(cloudwatch)
    metrics = CloudWatchMetrics(clients)

    read_all(ledger, metrics, "llm", T0 + timedelta(hours=3))

    cost = ledger.job("llm")
    assert cost.utilization == Decimal("0.7")
    assert cost.utilization_measured_share == Decimal("0.25")
    assert cost.accelerator_seconds == 237_600
    assert cost.effective_accelerator_hours == Decimal("16.8")
    summary = job_summary(cost)
    assert summary["utilization"] == "0.700000"
    # Instance cost / accelerator-hours: (21.50 x 2 x 2 + 1.34375 x 2) / 66.
    assert summary["usd_per_accelerator_hour"] == f"{Decimal('88.6875') / 66:.9f}"
    # One call for both hours (each instance's query once: GetMetricData is priced per
    # metric asked), split by hour, in the instances' account.
    assert len(cloudwatch.calls) == 1
    assert [len(c["MetricDataQueries"]) for c in cloudwatch.calls] == [3]
    assert (cloudwatch.calls[0]["StartTime"], cloudwatch.calls[0]["EndTime"]) == (
        T0,
        T0 + timedelta(hours=2),
    )
    assert set(clients.asked) == {("cloudwatch", ACCOUNT, REGION)}
    assert cloudwatch.calls[0]["MetricDataQueries"][0]["MetricStat"]["Stat"] == "Average"


def test_no_datapoints_is_not_measured_never_100_or_0_percent() -> None:
    ledger = ledger_of(profile(GPU, "p4d.24xlarge", job="gpu"))
    timeline = Timeline()
    timeline.run(GPU, T0, T0 + timedelta(hours=1))
    timeline.apply(ledger)
    read_all(ledger, CloudWatchMetrics(Clients(FakeCloudWatch())), "gpu", T0 + timedelta(hours=2))

    cost = ledger.job("gpu")
    assert cost.accelerator_seconds == 3600 * 8
    assert (cost.utilization, cost.utilization_measured_share) == (None, None)
    assert cost.effective_accelerator_hours is None
    row = compare_jobs([cost], ledger.deps.config)["jobs"][0]
    assert row["utilization"] is None  # busy_share called this 1.000
    assert row["usd_per_accelerator_hour"] == "2.500000000"  # $20/h over 8 GPUs


def test_per_device_series_are_averaged_over_the_devices_at_each_moment() -> None:
    """Only per-GPU series (no InstanceId aggregate): one SEARCH() per instance-hour. GPU 0
    at 100 % all hour, GPU 1 at 50 % for its first half: the first half-hour averages 75 %,
    the second 100 % (GPU 1 silent): (0.75 x 1,800 + 1.0 x 1,800) / 3,600 = 0.875."""
    config = LedgerConfig.model_validate(
        {"live_prices": False, "measurement": {"device_dimensions": {"gpu": ["index"]}}}
    )
    ledger = ledger_of(profile(GPU, "p4d.24xlarge", job="gpu"), config=config)
    timeline = Timeline()
    timeline.run(GPU, T0, T0 + timedelta(hours=1))
    timeline.apply(ledger)
    cloudwatch = FakeCloudWatch()
    cloudwatch.put(GPU, every_5_min(T0, 12, "100"), device="0")
    cloudwatch.put(GPU, every_5_min(T0, 6, "50"), device="1")

    read_all(ledger, CloudWatchMetrics(Clients(cloudwatch)), "gpu", T0 + timedelta(hours=2))

    expression = cloudwatch.calls[0]["MetricDataQueries"][0]["Expression"]
    assert expression == (
        'SEARCH(\'{"CWAgent",InstanceId,index} MetricName="nvidia_smi_utilization_gpu" '
        f"InstanceId=\"{GPU}\"', 'Average', 300)"
    )
    cost = ledger.job("gpu")
    assert cost.utilization == Decimal("0.875")
    assert cost.utilization_measured_share == Decimal(1)


def test_late_datapoints_are_picked_up_by_the_later_read_and_a_closed_hour_is_kept() -> None:
    """At 01:05 the hour 00:00-01:00 has only its first half (the agent is late): kept as
    open. The read at 01:20 (15 minutes after the hour) finds the rest and closes it; no
    read after that asks CloudWatch for the hour again."""
    ledger = ledger_of(profile(A1, "trn1.32xlarge"))
    timeline = Timeline()
    timeline.run(A1, T0)
    timeline.apply(ledger)
    cloudwatch = FakeCloudWatch()
    cloudwatch.put(A1, every_5_min(T0, 6, "80"))
    metrics = CloudWatchMetrics(Clients(cloudwatch))
    store = UtilizationStore(ledger.table)

    early = T0 + minutes(65)
    ledger.clock.advance_to(early)
    heads = list(ledger.deps.instances.open_heads())
    first = read_hours(
        ledger.deps.config, store, metrics, job_targets(job_records(ledger, "llm", T0), early),
        T0, T0 + timedelta(hours=1), early,
    )  # fmt: skip
    assert (first.hours_read, first.hours_closed) == (1, 0)
    assert ledger.job("llm", early).utilization == Decimal("0.8")

    cloudwatch.put(A1, every_5_min(T0 + minutes(30), 6, "40"))  # arrived late
    on_time = T0 + minutes(80)
    ledger.clock.advance_to(on_time)
    second = read_last_hour(ledger.deps.config, store, metrics, heads, on_time)
    assert (second.hours_read, second.hours_closed) == (1, 1)
    cost = ledger.job("llm", on_time)
    assert cost.utilization == Decimal("0.6")  # (0.8 x 1,800 + 0.4 x 1,800) / 3,600

    calls = len(cloudwatch.calls)
    cloudwatch.put(A1, every_5_min(T0, 12, "0"))  # whatever comes later is not read
    later = read_hours(
        ledger.deps.config, store, metrics, job_targets(job_records(ledger, "llm", T0), on_time),
        T0, T0 + timedelta(hours=1), on_time,
    )  # fmt: skip
    assert (later.hours_read, later.already_closed) == (0, 1)
    assert len(cloudwatch.calls) == calls
    assert ledger.job("llm", on_time).utilization == Decimal("0.6")


def test_a_closed_hour_is_added_to_the_instance_total_once() -> None:
    ledger = ledger_of()
    store = UtilizationStore(ledger.table)
    hour = T0
    kept = Measured(Decimal("2880"), 3600)
    assert store.record(ACCOUNT, A1, "llm", hour, kept, closed=True, read_at=T0)
    again = Measured(Decimal("0"), 3600)
    assert not store.record(ACCOUNT, A1, "llm", hour, again, closed=True, read_at=T0)
    assert not store.record(ACCOUNT, A1, "llm", hour, again, closed=False, read_at=T0)
    total = ledger.table.get(*total_key("llm", ACCOUNT, A1))
    assert total is not None and measured_total(total) == ((ACCOUNT, A1), kept)


def test_queries_go_500_to_a_call() -> None:
    cloudwatch = FakeCloudWatch()
    metrics = CloudWatchMetrics(Clients(cloudwatch))
    queries = [
        MetricQuery(f"i-{n:017x}", "NeuronMonitor", "neuroncore_utilization", "InstanceId", 300)
        for n in range(501)
    ]
    metrics.read_hour(ACCOUNT, REGION, T0, queries)
    assert [len(c["MetricDataQueries"]) for c in cloudwatch.calls] == [500, 1]
    assert (metrics.calls, metrics.queries) == (2, 501)


def test_a_datapoint_covers_its_period_inside_the_running_time_only() -> None:
    """Running 00:10-00:40: the point at 00:05 covers 00:10-00:10 (5 min from 00:05 is
    00:10: nothing), the one at 00:35 covers 00:35-00:40 (300 s), never beyond a stop."""
    running = [(T0 + minutes(10), T0 + minutes(40))]
    points = [Point(T0 + minutes(5), Decimal("0.5")), Point(T0 + minutes(35), Decimal("0.9"))]
    measured = measure(points, 300, running, T0)
    assert measured == Measured(Decimal("0.9") * 300, 300)


def test_an_unknown_accelerator_count_is_unknown_not_zero() -> None:
    use = AcceleratorUse()
    use.add("trn3.96xlarge", None, 3600, Measured(Decimal(1800), 3600))
    use.add("trn1.32xlarge", 16, 3600, Measured())
    assert use.accelerator_hours is None
    assert use.effective_accelerator_hours is None
    assert use.utilization == Decimal("0.5")
    assert use.unknown_types == {"trn3.96xlarge"}


# -- rule 11: warm-up --------------------------------------------------------------------


def warmup_ledger() -> tuple[Ledger, Timeline]:
    ledger = ledger_of(profile(A1, "trn1.32xlarge"))
    timeline = Timeline()
    timeline.run(A1, T0)
    return ledger, timeline


def test_warmup_ends_at_the_first_complete_checkpoint_when_it_comes_first() -> None:
    """Checkpoints from hour 2 on; the accelerator alarm first went OK on day 11 (the
    issue's job): warm-up is 2 h, not 10 days."""
    ledger, timeline = warmup_ledger()
    timeline.write("ckpt", "runs/llm/step-100/model.pt", T0 + timedelta(hours=2), 1024)
    timeline.write("ckpt", "runs/llm/step-200/model.pt", T0 + timedelta(hours=4), 1024)
    timeline.alarm(A1, "accelerator", "OK", T0 + timedelta(days=10, hours=11))
    timeline.apply(ledger)
    cost = ledger.job("llm", T0 + timedelta(days=11))
    assert cost.warmup_seconds == 7200
    assert cost.warmup_usd == Decimal("43")  # 2 h at $21.50


def test_warmup_ends_when_an_accelerator_low_alarm_is_first_ok_when_that_comes_first() -> None:
    ledger, timeline = warmup_ledger()
    timeline.alarm(A1, "accelerator", "OK", T0 + timedelta(minutes=40))
    timeline.write("ckpt", "runs/llm/step-100/model.pt", T0 + timedelta(hours=3), 1024)
    timeline.apply(ledger)
    assert ledger.job("llm", T0 + timedelta(hours=5)).warmup_seconds == 2400


def test_warmup_without_evidence_is_not_measured_never_the_whole_run() -> None:
    ledger, timeline = warmup_ledger()
    timeline.alarm(A1, "accelerator", "ALARM", T0 + timedelta(hours=1))
    timeline.apply(ledger)
    cost = ledger.job("llm", T0 + timedelta(days=3))
    assert (cost.warmup_seconds, cost.warmup_usd) == (None, None)
    assert job_summary(cost)["warmup_seconds"] is None


def test_usd_per_accelerator_hour_is_none_while_time_is_unpriced_never_zero() -> None:
    """trn2.48xlarge has no list price (bundled snapshot, no override): the job is
    incomplete and has no $/accelerator-hour, rather than $0.00."""
    ledger = ledger_of(profile(A1, "trn2.48xlarge"))
    timeline = Timeline()
    timeline.run(A1, T0, T0 + timedelta(hours=1))
    timeline.apply(ledger)
    cost = ledger.job("llm", T0 + timedelta(hours=2))
    assert not cost.complete and cost.accelerator_seconds == 3600 * 16
    assert job_summary(cost)["usd_per_accelerator_hour"] is None


def test_the_day_reader_reads_a_batch_of_jobs_in_one_call_for_its_hours() -> None:
    ledger = ledger_of(profile(A1, "trn1.32xlarge", "llm"), profile(A2, "trn1.32xlarge", "vit"))
    timeline = Timeline()
    for iid in (A1, A2):
        timeline.run(iid, T0, T0 + timedelta(hours=2))
    timeline.apply(ledger)
    cloudwatch = FakeCloudWatch()
    cloudwatch.put(A1, every_5_min(T0, 24, "80"))
    cloudwatch.put(A2, every_5_min(T0, 24, "40"))
    now = T0 + timedelta(hours=3)
    ledger.clock.advance_to(now)
    batch = [job_records(ledger, job, T0) for job in ("llm", "vit")]
    store = UtilizationStore(ledger.table)
    read = day_reader(ledger.deps.config, store, CloudWatchMetrics(Clients(cloudwatch)), T0,
                      T0 + timedelta(days=1), now)  # fmt: skip
    read(batch)
    assert [len(c["MetricDataQueries"]) for c in cloudwatch.calls] == [2]  # not 4 calls
    assert ledger.job("llm").utilization == Decimal("0.8")
    assert ledger.job("vit").utilization == Decimal("0.4")


def test_an_instance_asked_twice_for_an_hour_is_asked_in_calls_of_its_own() -> None:
    """An instance in two jobs of one day: each job's query is answered on its own (the
    answer is per instance), the hour kept once."""
    ledger = ledger_of(profile(A1, "trn1.32xlarge"))
    timeline = Timeline()
    timeline.run(A1, T0, T0 + timedelta(hours=1))
    timeline.apply(ledger)
    cloudwatch = FakeCloudWatch()
    cloudwatch.put(A1, every_5_min(T0, 12, "80"))
    now = T0 + timedelta(hours=2)
    ledger.clock.advance_to(now)
    targets = job_targets(job_records(ledger, "llm", T0), now)
    store = UtilizationStore(ledger.table)
    metrics = CloudWatchMetrics(Clients(cloudwatch))
    outcome = read_hours(ledger.deps.config, store, metrics, targets * 2, T0, now, now)
    assert [len(c["MetricDataQueries"]) for c in cloudwatch.calls] == [1, 1]
    assert (outcome.hours_read, outcome.hours_closed) == (2, 1)
    assert ledger.job("llm").utilization == Decimal("0.8")


def test_an_instance_in_two_jobs_over_several_hours_is_asked_once_and_kept_once() -> None:
    """The same, over two hours read together: one call, the instance's query once, each
    job's hours written apart, each hour kept once."""
    ledger = ledger_of(profile(A1, "trn1.32xlarge"))
    timeline = Timeline()
    timeline.run(A1, T0, T0 + timedelta(hours=2))
    timeline.apply(ledger)
    cloudwatch = FakeCloudWatch()
    cloudwatch.put(A1, every_5_min(T0, 12, "80") + every_5_min(T0 + timedelta(hours=1), 12, "40"))
    now = T0 + timedelta(hours=3)
    ledger.clock.advance_to(now)
    targets = job_targets(job_records(ledger, "llm", T0), now)
    store = UtilizationStore(ledger.table)
    metrics = CloudWatchMetrics(Clients(cloudwatch))
    outcome = read_hours(ledger.deps.config, store, metrics, targets * 2, T0, now, now)
    assert [len(c["MetricDataQueries"]) for c in cloudwatch.calls] == [1]
    assert (outcome.hours_read, outcome.hours_closed) == (4, 2)
    assert ledger.job("llm").utilization == Decimal("0.6")


def test_a_read_of_several_hours_keeps_only_the_hours_not_closed_once_each() -> None:
    """A1 runs 00:00-03:00 at 80 %, 40 %, 20 % an hour. Hour 01 is closed by its own read
    at 02:20 (its points then 40 %); the day's read at 04:00 asks 00:00-03:00 in one call,
    where hour 01 now says 100 %: that hour is kept as first closed, never written
    again. utilization (0.8 + 0.4 + 0.2) / 3 = 0.466..., effective 16 x 1.4 = 22.4."""
    ledger = ledger_of(profile(A1, "trn1.32xlarge"))
    timeline = Timeline()
    timeline.run(A1, T0, T0 + timedelta(hours=3))
    timeline.apply(ledger)
    cloudwatch = FakeCloudWatch()
    for hour, percent in ((0, "80"), (1, "40"), (2, "20")):
        cloudwatch.put(A1, every_5_min(T0 + timedelta(hours=hour), 12, percent))
    metrics = CloudWatchMetrics(Clients(cloudwatch))
    store = UtilizationStore(ledger.table)
    hour_1 = (T0 + timedelta(hours=1), T0 + timedelta(hours=2))
    now = T0 + timedelta(hours=2, minutes=20)
    ledger.clock.advance_to(now)
    targets = job_targets(job_records(ledger, "llm", T0), now)
    read_hours(ledger.deps.config, store, metrics, targets, *hour_1, now)
    cloudwatch.points[A1][""] = [
        (t, "100" if hour_1[0] <= t < hour_1[1] else v) for t, v in cloudwatch.points[A1][""]
    ]
    read_all(ledger, metrics, "llm", T0 + timedelta(hours=4))
    last = cloudwatch.calls[-1]
    assert (last["StartTime"], last["EndTime"]) == (T0, T0 + timedelta(hours=3))
    assert len(last["MetricDataQueries"]) == 1
    cost = ledger.job("llm")
    assert cost.utilization is not None
    assert cost.utilization.quantize(Decimal("0.000001")) == Decimal("0.466667")
    assert cost.effective_accelerator_hours == Decimal("22.4")
