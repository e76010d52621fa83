"""An organisation through the sweep, with stubbed AWS (botocore ``Stubber``):
``python -m bench.org_sweep [--accounts 200 --regions 4 --instances 60]``.

Every account x region answers DescribeInstances with its instances (one page of at
most 1,000) and DescribeAlarms with the tracker's two alarms per instance (pages of
100); each unit runs through ``shared.services.sweep_fanout.run_unit`` as the worker runs
it, over the in-memory ledger table. Two sweeps: the first, on an empty ledger (every
running instance is new: the sweep opens each, describing it once), and the steady
hour after (the ledger knows every instance). Measured: AWS calls per account, each
unit's duration (this machine, in process) and, on a sample of units, its peak Python
memory (tracemalloc); DynamoDB items written. The fan-out's total time is a MODEL: the
measured unit times spread over the configured concurrency. Results go to
``bench/org_sweep.json`` and into docs/accounts-admin.md by hand.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
import tracemalloc
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
from botocore.stub import Stubber

from shared.adapters.account_store import AccountStore
from shared.adapters.inventory import Ec2Inventory
from shared.adapters.table import MemoryTable, Operation
from shared.app import runtime
from shared.app.function_settings import FunctionSettings
from shared.app.sources import Sources
from shared.config.ledger import LedgerConfig
from shared.domain.clock import FixedClock
from shared.events.sweep_unit import SweepUnit
from shared.services.account_trust import AccountTrust
from shared.services.sweep import plan
from shared.services.sweep_fanout import run_unit

HERE = Path(__file__).resolve().parent
REGIONS = ("us-east-1", "us-west-2", "eu-west-1", "ap-northeast-1")
HOME = "100000000000"
LAUNCHED = datetime(2026, 11, 2, 8, 0, tzinfo=UTC)
MEMORY_SAMPLE = 16  # units measured under tracemalloc (it slows them several times)


class CountingTable(MemoryTable):
    """The in-memory ledger table, counting the items each write touches."""

    def __init__(self) -> None:
        super().__init__()
        self.items_written = 0

    def transact(self, operations: Sequence[Operation]) -> None:
        super().transact(operations)
        self.items_written += len(operations)


def _instance(n: int, account: str, region: str) -> dict[str, Any]:
    return {
        "InstanceId": f"i-{int(account) % 10**6:08x}{REGIONS.index(region):02x}{n:07x}",
        "InstanceType": "trn1.32xlarge",
        "State": {"Name": "running", "Code": 16},
        "LaunchTime": LAUNCHED,
        "Placement": {"AvailabilityZone": f"{region}a"},
        "PlatformDetails": "Linux/UNIX",
        "Tags": [{"Key": "training-job", "Value": f"job-{account}-{n // 8}"}],
    }


class StubbedOrganisation:
    """A ``ClientFactory`` whose clients are botocore clients under ``Stubber``: each
    unit's responses are queued before it runs (what AWS would answer, in order)."""

    def __init__(self, instances: int) -> None:
        self.instances = instances
        self._clients: dict[tuple[str, str, str], tuple[Any, Stubber]] = {}
        self.calls: Counter[tuple[str, str]] = Counter()  # (account, operation)

    def client_for(self, service: str, account: str = "", region: str = "") -> Any:
        return self._stubbed(service, account, region)[0]

    def _stubbed(self, service: str, account: str, region: str) -> tuple[Any, Stubber]:
        key = (service, account, region)
        if key not in self._clients:
            client = boto3.client(
                service,
                region_name=region,
                aws_access_key_id="stub",
                aws_secret_access_key="stub",
            )
            # Counted before the stubber answers (it ends the before-call handlers).
            client.meta.events.register(
                "before-call.*.*",
                lambda model, account=account, **_: self.calls.update([(account, model.name)]),
            )
            stubber = Stubber(client)
            stubber.activate()
            self._clients[key] = (client, stubber)
        return self._clients[key]

    def queue_unit(self, unit: SweepUnit, first_sweep: bool) -> None:
        instances = [_instance(n, unit.account, unit.region) for n in range(self.instances)]
        _, ec2 = self._stubbed("ec2", unit.account, unit.region)
        ec2.add_response(
            "describe_instances",
            {"Reservations": [{"OwnerId": unit.account, "Instances": instances}]},
        )
        if first_sweep:  # each new instance is described once as the sweep opens it
            for instance in instances:
                ec2.add_response(
                    "describe_instances",
                    {"Reservations": [{"OwnerId": unit.account, "Instances": [instance]}]},
                )
        _, cloudwatch = self._stubbed("cloudwatch", unit.account, unit.region)
        alarms = [
            {"AlarmName": f"costtracker-{i['InstanceId']}-{kind}"}
            for i in instances
            for kind in ("idle", "input-bound")
        ]
        for start in range(0, len(alarms), 100):
            page: dict[str, Any] = {"MetricAlarms": alarms[start : start + 100]}
            if start + 100 < len(alarms):
                page["NextToken"] = str(start + 100)
            cloudwatch.add_response("describe_alarms", page)


class ListQueue:
    def __init__(self) -> None:
        self.units: list[SweepUnit] = []

    def send(self, units: Sequence[SweepUnit]) -> None:
        self.units.extend(units)


def sweep(
    org: StubbedOrganisation, units: list[SweepUnit], first: bool, table: CountingTable
) -> dict[str, Any]:
    rt = runtime.current()
    config = rt.settings.config
    store = AccountStore(table)
    trust = AccountTrust(config.accounts, lambda: HOME, store, None, rt.clock)
    inventory = Ec2Inventory(org)
    queue = ListQueue()
    durations: list[float] = []
    peaks: list[int] = []
    written_before = table.items_written
    org.calls.clear()
    stride = max(2, len(units) // MEMORY_SAMPLE)  # every stride-th unit: memory, not time
    for n, unit in enumerate(units):
        measured = n % stride == 1
        if measured:  # the page as AWS would answer it counts too (built here, parsed there)
            tracemalloc.start()
        org.queue_unit(unit, first)
        started = time.perf_counter()
        result = run_unit(
            rt.ledger_deps(),
            inventory,
            unit,
            trust=trust,
            store=store,
            queue=queue,
            alarms_in_place=lambda account, region: _census(org, account, region),
        )
        elapsed = time.perf_counter() - started
        if measured:
            peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
        else:
            durations.append(elapsed)
        assert result.failed == [] and result.next_token is None, result
    per_account = Counter(account for (account, _op) in org.calls.elements())
    operations = Counter(op for (_account, op) in org.calls.elements())
    return {
        "units": len(units),
        "follow_up_units": len(queue.units),
        "unit_seconds_max": max(durations),
        "unit_seconds_median": statistics.median(durations),
        "unit_seconds_total": sum(durations) * len(units) / len(durations),
        "units_timed": len(durations),
        "unit_peak_memory_bytes_max": max(peaks),
        "units_memory_sampled": len(peaks),
        "calls_per_account": statistics.mean(per_account.values()),
        "calls_by_operation": dict(sorted(operations.items())),
        "dynamodb_items_written": table.items_written - written_before,
    }


def _census(org: StubbedOrganisation, account: str, region: str) -> int:
    from shared.adapters.alarm_census import alarms_in_place

    return alarms_in_place(org, account, region, "costtracker-")


def fan_out_model(result: dict[str, Any], concurrency: int) -> dict[str, Any]:
    """MODEL, not measured: the units spread over ``concurrency`` workers."""
    waves = math.ceil(result["units"] / concurrency)
    return {
        "label": "model: measured unit times spread over the configured concurrency",
        "concurrency": concurrency,
        "waves": waves,
        "seconds_if_every_unit_is_the_longest": waves * result["unit_seconds_max"],
        "seconds_from_total_unit_time": result["unit_seconds_total"] / concurrency,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.org_sweep", description=__doc__)
    parser.add_argument("--accounts", type=int, default=200)
    parser.add_argument("--regions", type=int, default=4, choices=range(1, 5))
    parser.add_argument("--instances", type=int, default=60)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--output", type=Path, default=HERE / "org_sweep.json")
    args = parser.parse_args(argv)
    accounts = [f"{200000000000 + n}" for n in range(args.accounts)]
    regions = REGIONS[: args.regions]
    config = LedgerConfig.model_validate(
        {
            "live_prices": False,
            "prices": {"ec2": {"trn1.32xlarge": "21.50"}},
            "accounts": {"allowed_accounts": accounts, "regions": list(regions)},
        }
    )
    settings = FunctionSettings(table_name="bench", config=config)
    table = CountingTable()
    clock = FixedClock(LAUNCHED + timedelta(hours=2))
    org = StubbedOrganisation(args.instances)
    units = plan(accounts, regions, 1000, "bench")
    sources = Sources(inventory=Ec2Inventory(org))
    with runtime.override(clock, sources=sources, settings=settings, table=table):
        first = sweep(org, units, True, table)
        clock.advance_to(clock.now() + timedelta(hours=1))
        steady = sweep(org, units, False, table)
    from bench.org_cost import organisation_self_cost

    document = {
        "organisation": {
            "accounts": args.accounts,
            "regions": len(regions),
            "instances_per_account_region": args.instances,
            "instances": args.accounts * len(regions) * args.instances,
        },
        "first_sweep": first | {"fan_out": fan_out_model(first, args.concurrency)},
        "steady_sweep": steady | {"fan_out": fan_out_model(steady, args.concurrency)},
        "dynamodb_items_written_per_hour_steady": steady["dynamodb_items_written"],
        "self_cost": organisation_self_cost(
            instances=args.accounts * len(regions) * args.instances,
            accounts=args.accounts,
            regions=len(regions),
            sweep=steady,
        ),
    }
    args.output.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
    print(json.dumps(document, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
