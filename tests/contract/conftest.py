"""One set of store-level cases, run against both versions of the ledger table: the
in-memory twin (``MemoryTable``) and DynamoDB (``DynamoTable`` on moto, in process,
the table built from ``ledger_schema`` as the CDK construct and the emulator build it).
A case that passes on one and fails on the other is a difference of the twin."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import boto3
import pytest
from moto import mock_aws

from costtracker.fakes.twins import FakeFleet
from shared.adapters import ledger_schema
from shared.adapters.checkpoint_store import CheckpointStore
from shared.adapters.instance_store import InstanceStore
from shared.adapters.price_cache_store import PriceCacheStore
from shared.adapters.pricing import PriceBook
from shared.adapters.pricing_snapshot import bundled_snapshot
from shared.adapters.rollup_store import RollupStore
from shared.adapters.table import DynamoTable, MemoryTable, Table
from shared.config.ledger import LedgerConfig
from shared.domain.clock import FixedClock
from shared.domain.instance import InstanceProfile
from shared.services.deps import LedgerDeps

REGION = "us-east-1"
ACCOUNT = "123456789012"
T0 = datetime(2026, 11, 1, tzinfo=UTC)


@pytest.fixture(autouse=True)
def aws_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.setenv(key, "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)


@pytest.fixture(params=["memory", "dynamodb"])
def table(request: pytest.FixtureRequest) -> Iterator[Table]:
    if request.param == "memory":
        yield MemoryTable()
        return
    with mock_aws():
        client = boto3.client("dynamodb", region_name=REGION)
        client.create_table(**ledger_schema.create_table_request("contract"))
        yield DynamoTable(client, "contract")


@dataclass
class Ledger:
    """The ledger services over ``table``, with the checkpoint store and EC2's view."""

    deps: LedgerDeps
    checkpoints: CheckpointStore
    fleet: FakeFleet
    clock: FixedClock


def ledger_over(
    table: Table, *profiles: InstanceProfile, config: LedgerConfig, now: datetime = T0
) -> Ledger:
    fleet = FakeFleet(*profiles)
    clock = FixedClock(now)
    deps = LedgerDeps(
        table=table,
        instances=InstanceStore(table),
        rollups=RollupStore(table),
        inventory=fleet,
        prices=PriceBook(config, PriceCacheStore(table), None, bundled_snapshot(), now.date()),
        clock=clock,
        config=config,
    )
    return Ledger(deps, CheckpointStore(table), fleet, clock)


def fresh(ledger: Ledger) -> Ledger:
    """The same table seen by a new container (nothing remembered)."""
    deps = ledger.deps
    table = deps.table
    new = LedgerDeps(
        table=table,
        instances=InstanceStore(table),
        rollups=RollupStore(table),
        inventory=deps.inventory,
        prices=deps.prices,
        clock=deps.clock,
        config=deps.config,
    )
    return Ledger(new, CheckpointStore(table), ledger.fleet, ledger.clock)
