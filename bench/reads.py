"""Section 2: DynamoDB calls of the read paths at 10 and at 1,000 jobs.

The ledger is written by the services themselves (``record_state_change`` and
``record_object_event`` over the in-memory table, the twin of the DynamoDB one),
then its items are loaded into a fresh emulator's table with BatchWriteItem (a
few seconds instead of minutes of one transaction per event; the items are the
ones the services write). Then, in a cold container (empty caches), the API
handler answers ``GET /jobs`` (limit 20, the default 7 days and a 93-day range)
and ``GET /jobs/{id}``, and the ``budget_tick`` handler runs once with three
budgets (a month budget on a tag, a day budget on the account, a total budget
on a tag), every call counted by ``bench.counter``.
"""

from __future__ import annotations

import functools
import json
import os
import random
import statistics
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from datetime import UTC, datetime, timedelta
from typing import Any
from unittest import mock

from bench.counter import CallCounter, default_events, summarize
from costtracker.fakes.scenario_events import scheduled_event

ACCOUNT, REGION, BUCKET = "123456789012", "us-east-1", "bench-reads"
NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
SPAN = timedelta(days=10)
PRICES = {
    "ec2": {"trn1.32xlarge": "21.50", "p5.48xlarge": "98.32", "g5.12xlarge": "5.672"},
    "ebs_gb_month": {"gp3": "0.08"},
    "s3_gb_month": "0.023",
}
BUDGETS = (
    {
        "budget_id": "nlp-month",
        "scope": {"tag": {"team": "nlp"}},
        "amount_usd": "100000000",
        "period": "month",
    },
    {
        "budget_id": "account-day",
        "scope": {"account": True},
        "amount_usd": "100000000",
        "period": "day",
    },
    {
        "budget_id": "llama-total",
        "scope": {"tag": {"project": "llama"}},
        "amount_usd": "100000000",
        "period": "total",
    },
)
CHECKPOINT_EVERY = timedelta(hours=12)
TYPES = ("trn1.32xlarge", "p5.48xlarge", "g5.12xlarge")


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def config() -> Any:
    from shared.config.ledger import LedgerConfig

    return LedgerConfig.model_validate(
        {
            "live_prices": False,
            "prices": {**PRICES, "as_of": (NOW - SPAN - timedelta(days=1)).date().isoformat()},
            "checkpoint": {
                "buckets": [BUCKET],
                "key_pattern": r"^runs/(?P<job>[^/]+)/step-(?P<step>\d+)/",
            },
            "budgets": list(BUDGETS),
        }
    )


def build_ledger(jobs: int, seed: int = 7) -> tuple[Any, dict[str, int]]:
    """A ledger of ``jobs`` jobs (1-3 instances each, runs over the last 10 days, a third
    still running now, a checkpoint every 12 hours of running) in the in-memory table."""
    from costtracker.fakes.twins import FakeInventory
    from shared.adapters.checkpoint_store import CheckpointStore
    from shared.adapters.instance_store import InstanceStore
    from shared.adapters.price_cache_store import PriceCacheStore
    from shared.adapters.pricing import PriceBook
    from shared.adapters.pricing_snapshot import bundled_snapshot
    from shared.adapters.rollup_store import RollupStore
    from shared.adapters.table import MemoryTable
    from shared.domain.clock import FixedClock
    from shared.domain.ebs import Volume
    from shared.domain.instance import InstanceProfile
    from shared.services.checkpoints import record_object_event
    from shared.services.deps import LedgerDeps
    from shared.services.instances import record_state_change

    rng = random.Random(seed)
    cfg = config()
    profiles: dict[str, Any] = {}
    events: list[tuple[datetime, int, str, dict[str, Any]]] = []
    n = 0
    for j in range(jobs):
        job = f"job-{j:05d}"
        itype = TYPES[j % len(TYPES)]
        tags = {
            "training-job": job,
            "project": ("llama", "gpt", "vision")[j % 3],
            "team": ("nlp", "vision", "research")[(j // 3) % 3],
            "owner": f"user{j % 7}",
        }
        start = (
            NOW - SPAN + timedelta(minutes=rng.randrange(0, int(SPAN.total_seconds() // 60) - 60))
        )
        for _ in range(1 + j % 3):
            n += 1
            iid = f"i-0{n:016x}"
            profiles[iid] = InstanceProfile(
                instance_id=iid,
                instance_type=itype,
                region=REGION,
                account=ACCOUNT,
                availability_zone=f"{REGION}a",
                tags=tags,
                volumes=(Volume(volume_id=f"vol-{n:08x}", size_gib=500),),
            )
            t = start + timedelta(seconds=rng.randrange(0, 300))
            for run in range(2):
                if t >= NOW:
                    break
                events.append((t, len(events), "running", {"iid": iid}))
                stop = t + timedelta(hours=rng.randrange(2, 30))
                ck = t + CHECKPOINT_EVERY
                while ck < min(stop, NOW):
                    step = int((ck - NOW + SPAN).total_seconds() // 60)
                    key = f"runs/{job}/step-{step}/shard-{iid}.pt"
                    events.append((ck, len(events), "object", {"key": key}))
                    ck += CHECKPOINT_EVERY
                if stop >= NOW or (run == 1 and rng.random() < 0.5):
                    break  # still running now
                events.append((stop, len(events), "stopping", {"iid": iid}))
                events.append((stop + timedelta(seconds=50), len(events), "stopped", {"iid": iid}))
                t = stop + timedelta(hours=rng.randrange(1, 12))
    events.sort(key=lambda e: (e[0], e[1]))
    table = MemoryTable()
    clock = FixedClock(events[0][0])
    deps = LedgerDeps(
        table=table,
        instances=InstanceStore(table),
        rollups=RollupStore(table),
        inventory=FakeInventory(*profiles.values()),
        prices=PriceBook(cfg, PriceCacheStore(MemoryTable()), None, bundled_snapshot(), NOW.date()),
        clock=clock,
        config=cfg,
    )
    store = CheckpointStore(table)
    counts = {"instances": n, "state_events": 0, "object_events": 0}
    for i, (at, _, kind, data) in enumerate(events):
        clock.advance_to(at)
        if kind == "object":
            record_object_event(
                deps,
                store,
                event_id=f"o{i}",
                at=at,
                region=REGION,
                account=ACCOUNT,
                bucket=BUCKET,
                raw_key=data["key"],
                size_bytes=8 * 2**30,
            )
            counts["object_events"] += 1
        else:
            record_state_change(
                deps,
                event_id=f"e{i}",
                at=at,
                instance_id=data["iid"],
                state=kind,
                region=REGION,
                account=ACCOUNT,
            )
            counts["state_events"] += 1
    return table, counts


def load_into(client: Any, table_name: str, memory_table: Any) -> int:
    """Every item of the in-memory table into the emulator's (BatchWriteItem, 25 a call)."""
    from boto3.dynamodb.types import TypeSerializer

    ser = TypeSerializer()
    items = [{k: ser.serialize(v) for k, v in item.items()} for item in memory_table.items.values()]
    for start in range(0, len(items), 25):
        request = {table_name: [{"PutRequest": {"Item": i}} for i in items[start : start + 25]]}
        while request:
            request = client.batch_write_item(RequestItems=request).get("UnprocessedItems") or {}
    return len(items)


@contextmanager
def _container(emulator: Any) -> Iterator[None]:
    """The functions' environment pointed at the emulator, a cold container, NOW."""
    from costtracker.emulator import function_environment
    from shared.app import runtime
    from shared.domain.clock import FixedClock

    env = function_environment(emulator, config().model_dump_json())

    def patient_client(service: str, region: str | None = None) -> Any:
        # moto answers a GSI Query by walking the whole table (seconds at tens of
        # thousands of items): a longer read timeout than the functions' 20 s, so that
        # botocore does not time out and retry (calls are counted once either way).
        import boto3
        from botocore.config import Config

        return boto3.client(
            service,
            region_name=region or os.environ.get("AWS_REGION", "us-east-1"),
            config=Config(retries={"mode": "standard", "max_attempts": 5}, read_timeout=600),
        )

    patient = functools.cache(patient_client)

    class PatientRuntime(runtime.Runtime):
        def client(self, service: str, region: str | None = None) -> Any:
            return patient(service, region)

    with (
        mock.patch.dict(os.environ, env),
        redirect_stdout(sys.stderr),
        runtime.using(PatientRuntime(FixedClock(NOW))),
    ):
        yield


def measure_one(jobs: int) -> dict[str, Any]:
    import time

    from costtracker.emulator import TABLE_NAME, running_emulator
    from costtracker.lambda_context import FakeLambdaContext
    from costtracker.local_api import proxy_event

    t0 = time.perf_counter()
    memory, counts = build_ledger(jobs)
    out: dict[str, Any] = {"jobs": jobs, **counts, "build_s": time.perf_counter() - t0}
    with running_emulator(REGION, ACCOUNT) as emulator:
        t0 = time.perf_counter()
        out["items"] = load_into(emulator.client("dynamodb"), TABLE_NAME, memory)
        out["load_s"] = time.perf_counter() - t0
        _say(
            f"  built in {out['build_s']:.0f} s,"
            f" loaded {out['items']:,} items in {out['load_s']:.0f} s"
        )
        counter = CallCounter()
        events = default_events()
        with _container(emulator):
            from functions.budget_tick.handler import handler as tick
            from functions.job_cost_api.handler import handler as api

            def get(path: str) -> tuple[dict[str, Any], dict[str, Any]]:
                mark = len(counter.calls)
                t0 = time.perf_counter()
                response = api(
                    proxy_event("GET", path, {"Accept": "application/json"}),
                    FakeLambdaContext(function_name="job_cost_api"),  # type: ignore[arg-type]
                )
                if int(response["statusCode"]) != 200:
                    raise RuntimeError(
                        f"GET {path}: {response['statusCode']} {response['body'][:200]}"
                    )
                _say(f"  GET {path}: {time.perf_counter() - t0:.1f} s")
                return json.loads(response["body"]), summarize(counter.since(mark))

            counter.register(events)
            try:
                page, out["list_7d"] = get("/jobs?limit=20")
                first = (NOW - timedelta(days=92)).date().isoformat()
                _, out["list_93d"] = get(f"/jobs?limit=20&from={first}&to={NOW.date().isoformat()}")
                _, out["list_93d_next"] = (
                    get(f"/jobs?limit=20&from={first}&next_token={page['next_token']}")
                    if page.get("next_token")
                    else (None, None)
                )
                out["page_jobs"] = len(page["jobs"])
                ids = [j["job_id"] for j in page["jobs"]][:10]
                out["detail"] = [get(f"/jobs/{jid}")[1] for jid in ids]
                out["ticks"] = []
                for minute in range(3):  # the first tick of a container, then warm ones
                    at = NOW + timedelta(minutes=minute)
                    from shared.app import runtime

                    runtime.clock().advance_to(at)  # type: ignore[attr-defined]  # a FixedClock
                    mark = len(counter.calls)
                    tick(
                        scheduled_event(f"tick-{minute}", at, account=ACCOUNT, region=REGION),
                        FakeLambdaContext(function_name="budget_tick"),  # type: ignore[arg-type]
                    )
                    out["ticks"].append(summarize(counter.since(mark)))
            finally:
                counter.unregister(events)
    return out


def measure(sizes: tuple[int, ...] = (10, 1000)) -> dict[int, dict[str, Any]]:
    results: dict[int, dict[str, Any]] = {}
    for jobs in sizes:
        _say(f"reads: building a ledger of {jobs:,} jobs")
        results[jobs] = measure_one(jobs)
        r = results[jobs]
        _say(
            f"  {r['instances']:,} instances, {r['state_events']:,} state and"
            f" {r['object_events']:,} object events, {r['items']:,} items;"
            f" GET /jobs {r['list_7d']['ddb_calls']} DynamoDB calls,"
            f" budget tick {statistics.median(t['ddb_calls'] for t in r['ticks'])}"
        )
    return results
