"""The ledger services wired to in-memory twins: the real stores over ``MemoryTable``, a
fixed inventory and clock (no I/O at all), as the unit tests wire them."""

from __future__ import annotations

from datetime import datetime
from typing import Any


def memory_deps(config: Any, profiles: dict[str, Any], now: datetime) -> Any:
    """``LedgerDeps`` over a fresh in-memory table (``deps.table``), clock at ``now``."""
    from costtracker.fakes.twins import FakeInventory
    from shared.adapters.instance_store import InstanceStore
    from shared.adapters.price_cache_store import PriceCacheStore
    from shared.adapters.pricing import PriceBook
    from shared.adapters.pricing_snapshot import bundled_snapshot
    from shared.adapters.rollup_store import RollupStore
    from shared.adapters.table import MemoryTable
    from shared.domain.clock import FixedClock
    from shared.services.deps import LedgerDeps

    table = MemoryTable()
    return LedgerDeps(
        table=table,
        instances=InstanceStore(table),
        rollups=RollupStore(table),
        inventory=FakeInventory(*profiles.values()),
        prices=PriceBook(
            config, PriceCacheStore(MemoryTable()), None, bundled_snapshot(), now.date()
        ),
        clock=FixedClock(now),
        config=config,
    )


def scenario_profiles(scenario: Any) -> dict[str, Any]:
    """The scenario's instances as DescribeInstances gives them in replay (the replay's own
    ``ScenarioInstances``, each in its account and region)."""
    from costtracker.fakes.scenario_aws import ScenarioInstances

    inventory = ScenarioInstances(scenario)
    return {
        s.instance_id: inventory.describe(
            s.instance_id, s.region or scenario.region, s.account or scenario.account
        )
        for s in scenario.instances
    }
