"""What the ledger services need, as one frozen set (built by ``shared.app.runtime``;
tests build it over the in-memory table)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shared.adapters.instance_store import InstanceStore
    from shared.adapters.inventory import Inventory
    from shared.adapters.pricing import PriceBook
    from shared.adapters.rollup_store import RollupStore
    from shared.adapters.table import Table
    from shared.config.ledger import LedgerConfig
    from shared.domain.clock import Clock
    from shared.services.reservations import ReservationLedger


@dataclass(frozen=True)
class LedgerDeps:
    """The table, the stores of instances and rollups, EC2's inventory, prices, the clock
    and the configuration."""

    table: Table
    instances: InstanceStore
    rollups: RollupStore
    inventory: Inventory
    prices: PriceBook
    clock: Clock
    config: LedgerConfig
    # Capacity reservations (Capacity Blocks, ODCRs): None where none are tracked.
    reservations: ReservationLedger | None = None
