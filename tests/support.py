"""Unit-test wiring of the ledger services: the real stores over the in-memory table
(the twin of the DynamoDB table), a fake EC2 inventory and a fixed clock."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from shared.adapters import keys
from shared.adapters.ledger_store import CheckpointStore, InstanceStore, RollupStore
from shared.adapters.table import MemoryTable
from shared.clock import FixedClock
from shared.config import LedgerConfig
from shared.domain import accrual as acc
from shared.domain.instance import InstanceProfile
from shared.pricing import PriceBook, bundled_snapshot
from shared.services.instances import LedgerDeps
from shared.services.job_view import get_job_cost
from tests.fakes import FakeInventory, InMemoryLedger, RecordingNotifier

ACCOUNT = "123456789012"
REGION = "us-east-1"


@dataclass
class Ledger:
    """Everything a unit test needs to drive the services and read the results."""

    deps: LedgerDeps
    table: MemoryTable
    checkpoints: CheckpointStore
    records: InMemoryLedger  # budgets, price cache, claims, summaries
    notifier: RecordingNotifier
    clock: FixedClock

    def job(self, job_id: str, now: datetime | None = None) -> Any:
        return get_job_cost(self.deps, job_id, now or self.clock.now())

    def rollup_value(self, job_id: str, component: str, now: datetime | None = None) -> Decimal:
        items = self.deps.rollups.of_job(job_id)
        accrual = acc.total(acc.from_attributes(i) for i in items)
        return accrual.value(component, now or self.clock.now(), self.deps.prices.clock)


def memory_ledger(
    *profiles: InstanceProfile,
    config: LedgerConfig | None = None,
    now: datetime = datetime(2026, 11, 1, 10, tzinfo=UTC),
    live: Any = None,
) -> Ledger:
    config = config or LedgerConfig(live_prices=False)
    table = MemoryTable(keys.INDEXES)
    records = InMemoryLedger()
    clock = FixedClock(now)
    deps = LedgerDeps(
        table=table,
        instances=InstanceStore(table),
        rollups=RollupStore(table),
        inventory=FakeInventory(*profiles),
        prices=PriceBook(config, records, live, bundled_snapshot(), now.date()),
        clock=clock,
        config=config,
    )
    return Ledger(deps, table, CheckpointStore(table), records, RecordingNotifier(), clock)


def largest_item(table: MemoryTable) -> tuple[int, str]:
    """The largest item's size in bytes (as stored: JSON of its attributes) and its key."""
    from shared.adapters.ledger_store import dump

    return max((len(dump(item).encode()), f"{pk} {sk}") for (pk, sk), item in table.items.items())


def profiles_by_id(profiles: Sequence[InstanceProfile]) -> dict[str, InstanceProfile]:
    return {p.instance_id: p for p in profiles}
