"""Unit-test wiring of the ledger services: the real stores over the in-memory table
(the twin of the DynamoDB table: every record kind, budgets and price cache included), a
fake EC2 inventory and a fixed clock; and the moto set-up the integration tests share
(the ledger's table and settings, a tagged instance)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Protocol

import boto3
import pytest

from costtracker.fakes.twins import FakeInventory, RecordingNotifier
from shared.adapters import ledger_schema
from shared.adapters.budget_store import BudgetStore
from shared.adapters.checkpoint_store import CheckpointStore
from shared.adapters.instance_store import InstanceStore
from shared.adapters.price_cache_store import PriceCacheStore
from shared.adapters.pricing import PriceBook
from shared.adapters.pricing_snapshot import bundled_snapshot
from shared.adapters.rollup_store import RollupStore
from shared.adapters.table import MemoryTable
from shared.config.ledger import LedgerConfig
from shared.domain import accrual as acc
from shared.domain.clock import FixedClock
from shared.domain.instance import InstanceProfile
from shared.services.checkpoints import CheckpointOutcome, record_object_event
from shared.services.deps import LedgerDeps
from shared.services.job_view import get_job_cost

if TYPE_CHECKING:
    from shared.domain.alarm_record import AlarmIdentity

ACCOUNT = "123456789012"
REGION = "us-east-1"


def moto_ledger(monkeypatch: pytest.MonkeyPatch, table: str, config: str) -> None:
    """Inside ``mock_aws``: the ledger's table on moto, and the settings (``config``: the
    ``LEDGER_CONFIG`` JSON) the functions read."""
    boto3.client("dynamodb", region_name=REGION).create_table(
        **ledger_schema.create_table_request(table)
    )
    monkeypatch.setenv("TABLE_NAME", table)
    monkeypatch.setenv("LEDGER_CONFIG", config)


def moto_instance(ec2: Any, instance_type: str, tags: Mapping[str, str], **more: Any) -> str:
    """Inside ``mock_aws``: one instance of ``instance_type`` carrying ``tags`` (``more``:
    other RunInstances parameters), in a reservation of its own; its id."""
    tagging = [
        {"ResourceType": "instance", "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}
    ]
    launched = ec2.run_instances(
        ImageId="ami-12c6146b",
        MinCount=1,
        MaxCount=1,
        InstanceType=instance_type,
        TagSpecifications=tagging if tags else [],
        **more,
    )
    return str(launched["Instances"][0]["InstanceId"])


@dataclass
class Ledger:
    """Everything a unit test needs to drive the services and read the results."""

    deps: LedgerDeps
    table: MemoryTable
    checkpoints: CheckpointStore
    budgets: BudgetStore
    price_cache: PriceCacheStore
    notifier: RecordingNotifier
    clock: FixedClock

    def job(self, job_id: str, now: datetime | None = None) -> Any:
        return get_job_cost(self.deps, job_id, now or self.clock.now())

    def rollup_value(self, job_id: str, component: str, now: datetime | None = None) -> Decimal:
        items = self.deps.rollups.of_job(job_id)
        accrual = acc.total(acc.from_attributes(i) for i in items)
        return accrual.value(component, now or self.clock.now(), self.deps.prices.clock)


class Drives(Protocol):
    """A ledger the checkpoint service can be driven on (this module's or the contract
    suite's)."""

    deps: LedgerDeps
    checkpoints: CheckpointStore


def object_event(
    ledger: Drives,
    event_id: str,
    at: datetime,
    key: str,
    size_bytes: int | None,
    *,
    bucket: str = "b",
    region: str = REGION,
    sequencer: str = "",
) -> CheckpointOutcome:
    """An S3 Object Created (``size_bytes``) or Object Deleted (None) in the tests'
    account, through the checkpoint service."""
    return record_object_event(
        ledger.deps,
        ledger.checkpoints,
        event_id=event_id,
        at=at,
        region=region,
        account=ACCOUNT,
        bucket=bucket,
        raw_key=key,
        size_bytes=size_bytes,
        sequencer=sequencer,
    )


def memory_ledger(
    *profiles: InstanceProfile,
    config: LedgerConfig | None = None,
    now: datetime = datetime(2026, 11, 1, 10, tzinfo=UTC),
    live: Any = None,
) -> Ledger:
    config = config or LedgerConfig(live_prices=False)
    table = MemoryTable()
    price_cache = PriceCacheStore(table)
    clock = FixedClock(now)
    deps = LedgerDeps(
        table=table,
        instances=InstanceStore(table),
        rollups=RollupStore(table),
        inventory=FakeInventory(*profiles),
        prices=PriceBook(config, price_cache, live, bundled_snapshot(), now.date()),
        clock=clock,
        config=config,
    )
    return Ledger(
        deps,
        table,
        CheckpointStore(table),
        BudgetStore(table),
        price_cache,
        RecordingNotifier(),
        clock,
    )


def running_jobs_ledger(
    jobs: Sequence[str], config: LedgerConfig, at: datetime, instance_type: str = "trn1.32xlarge"
) -> Ledger:
    """A memory ledger holding one instance per job, each running since ``at``."""
    from shared.services.instances import record_state_change

    profiles = [
        InstanceProfile(
            instance_id=f"i-{n:017x}",
            instance_type=instance_type,
            region=REGION,
            account=ACCOUNT,
            tags={"training-job": job},
        )
        for n, job in enumerate(jobs)
    ]
    ledger = memory_ledger(*profiles, config=config, now=at)
    for p in profiles:
        record_state_change(
            ledger.deps,
            event_id=f"run-{p.instance_id}",
            at=at,
            instance_id=p.instance_id,
            state="running",
            region=REGION,
            account=ACCOUNT,
        )
    return ledger


def memory_price_cache() -> PriceCacheStore:
    """A price cache over a table of its own."""
    return PriceCacheStore(MemoryTable())


def cached_price_keys(cache: PriceCacheStore) -> list[str]:
    table = cache.table
    assert isinstance(table, MemoryTable)
    return [pk.removeprefix("PRICE#") for pk, _ in table.items if pk.startswith("PRICE#")]


def largest_item(table: MemoryTable) -> tuple[int, str]:
    """The largest item's size in bytes (as stored: JSON of its attributes) and its key."""
    from shared.adapters.items import dump

    return max((len(dump(item).encode()), f"{pk} {sk}") for (pk, sk), item in table.items.items())


def profiles_by_id(profiles: Sequence[InstanceProfile]) -> dict[str, InstanceProfile]:
    return {p.instance_id: p for p in profiles}


# -- helpers of the unit tests ---------------------------------------------------------------


class TransactionLog:
    """Wraps ``MemoryTable.transact`` and records the number of items of each transaction
    (failed ones included: a condition that fails writes nothing but was attempted)."""

    def __init__(self, table: MemoryTable) -> None:
        self.sizes: list[int] = []
        self.failed: list[int] = []
        self._real = table.transact
        self._hooks: list[Any] = []
        table.transact = self._transact  # type: ignore[method-assign]

    def _transact(self, operations: Sequence[Any]) -> None:
        for hook in list(self._hooks):
            hook(operations)
        try:
            self._real(operations)
        except Exception:
            self.failed.append(len(operations))
            raise
        self.sizes.append(len(operations))

    def before_each(self, hook: Any) -> None:
        """Call ``hook(operations)`` before every transaction (to inject a race)."""
        self._hooks.append(hook)

    def mark(self) -> int:
        return len(self.sizes)

    def since(self, mark: int) -> list[int]:
        return self.sizes[mark:]


def with_prices(ledger: Ledger, config: LedgerConfig) -> None:
    """Swap the ledger's configuration and price book (an admin configured a price)."""
    import dataclasses

    prices = PriceBook(
        config, ledger.price_cache, None, bundled_snapshot(), ledger.clock.now().date()
    )
    ledger.deps = dataclasses.replace(ledger.deps, prices=prices, config=config)


class SeriesTable:
    """A ``SeriesReader`` (and accrual clock reader) over given spot series."""

    def __init__(self, *series: Any) -> None:
        self.series = {s.series_id: s for s in series}

    def integral(self, series_id: str, at: datetime) -> Decimal:
        result: Decimal = self.series[series_id].integral(at)
        return result

    def rate_at(self, series_id: str, at: datetime) -> Decimal:
        result: Decimal = self.series[series_id].rate_at(at)
        return result

    def clock(self, clock: str, at: datetime) -> Decimal:
        if clock.startswith("spot:"):
            return self.integral(clock.removeprefix("spot:"), at)
        return acc.basic_clock(clock, at)


def alarm_name(instance_id: str, signal: str, prefix: str = "costtracker-") -> str:
    """The name of one of the tracker's own alarms (docs/cost-rules.md "Metrics for idle
    detection")."""
    suffix = {"accelerator": "accelerator-low", "cpu": "cpu-low"}[signal]
    return f"{prefix}{instance_id}-{suffix}"


def tracker_alarm(
    deps: LedgerDeps, instance_id: str, signal: str, account: str = ACCOUNT, region: str = REGION
) -> AlarmIdentity | None:
    """The alarm the tracker puts for this instance and signal, recorded as the alarm
    lifecycle records what it puts (``shared.adapters.alarm_store``), as its state-change
    events name it (None where the tracker puts no such alarm)."""
    from shared.adapters.alarm_store import AlarmStore
    from shared.adapters.alarms import alarm_specs
    from shared.domain.alarm_record import PutAlarm

    pointer = deps.instances.pointer(account, instance_id)
    head = (
        deps.instances.head(pointer.job_id, account, instance_id)
        if pointer and pointer.job_id
        else None
    )
    if head is None:
        return None
    config = deps.config.utilization
    specs = alarm_specs(
        config, instance_id, head.profile.instance_type, account=account, region=region
    )
    for spec in specs:
        if spec.signal == signal:
            identity = spec.identity(config)
            store = AlarmStore(deps.table)
            if store.get(account, region, spec.name) is None:
                put_at = head.open_segment.span.start if head.open_segment else deps.clock.now()
                store.put(PutAlarm(identity=identity, instance_id=instance_id,
                                   signal=spec.signal, put_at=put_at))  # fmt: skip
            return identity
    return None


class Timeline:
    """The events of a hand-made scenario, applied in event-time order (as they would
    arrive live, the clock following them) through the real services."""

    def __init__(self) -> None:
        self._events: list[tuple[datetime, int, Any]] = []

    def _add(self, at: datetime, apply: Any) -> None:
        self._events.append((at, len(self._events), apply))

    def state(self, instance_id: str, at: datetime, state: str, event_id: str = "") -> None:
        from shared.services.instances import record_state_change

        eid = event_id or f"{instance_id}-{state}-{at.isoformat()}"
        self._add(at, lambda ledger: record_state_change(
            ledger.deps, event_id=eid, at=at, instance_id=instance_id, state=state,
            region=REGION, account=ACCOUNT))  # fmt: skip

    def run(self, instance_id: str, start: datetime, end: datetime | None = None) -> None:
        """A running segment, stopped at ``end`` (None: still running)."""
        self.state(instance_id, start, "running")
        if end is not None:
            self.state(instance_id, end, "stopped")

    def alarm(self, instance_id: str, signal: str, state: str, at: datetime) -> None:
        """One of the tracker's own alarms of the instance changing state."""
        from shared.services.utilization import record_alarm_change

        eid = f"{instance_id}-{signal}-{state}-{at.isoformat()}"
        self._add(at, lambda ledger: record_alarm_change(
            ledger.deps, ledger.notifier, None, event_id=eid,
            alarm_name=alarm_name(instance_id, signal),
            seen=tracker_alarm(ledger.deps, instance_id, signal), state=state,
            state_at=at))  # fmt: skip

    def idle(self, instance_id: str, start: datetime, end: datetime) -> None:
        """Both alarms (accelerator low, CPU low) in ALARM from ``start``, OK at ``end``."""
        for signal in ("accelerator", "cpu"):
            self.alarm(instance_id, signal, "ALARM", start)
            self.alarm(instance_id, signal, "OK", end)

    def write(self, bucket: str, key: str, at: datetime, size_bytes: int | None = 0) -> None:
        """A checkpoint object written (``size_bytes``) or deleted (None)."""
        eid = f"{bucket}/{key}@{at.isoformat()}"
        self._add(at, lambda ledger: object_event(ledger, eid, at, key, size_bytes, bucket=bucket))

    def apply(self, ledger: Ledger) -> None:
        for at, _, apply in sorted(self._events, key=lambda e: (e[0], e[1])):
            ledger.clock.advance_to(at)
            apply(ledger)


def job_records(ledger: Ledger, job_id: str, since: datetime) -> Any:
    """A job's records with every sealed record ending at or after ``since``."""
    from shared.adapters.job_records import load_job

    records = load_job(ledger.table, ledger.deps.rollups, job_id, since=since)
    assert records is not None, f"no records of {job_id}"
    return records
