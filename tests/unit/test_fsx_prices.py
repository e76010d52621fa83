"""The bundled FSx for Lustre prices (cost rule 13): every tier the product names, priced
only where a public source gave a figure, each region's with its own source and date; the
rest unpriced (None), never 0 and never borrowed from another region."""

from __future__ import annotations

from decimal import Decimal

import pytest

from shared.config.ledger import LedgerConfig
from tests.support import memory_ledger

TIERS = (
    "PERSISTENT_1_50",
    "PERSISTENT_1_100",
    "PERSISTENT_1_200",
    "PERSISTENT_2_125",
    "PERSISTENT_2_250",
    "PERSISTENT_2_500",
    "PERSISTENT_2_1000",
    "PERSISTENT_1_12",
    "PERSISTENT_1_40",
    "SCRATCH_2",
)
SOURCED = {
    "us-east-1": {"PERSISTENT_2_125": "0.145", "SCRATCH_2": "0.140"},
    "us-west-2": {
        "SCRATCH_2": "0.14",
        "PERSISTENT_1_50": "0.14",
        "PERSISTENT_1_100": "0.19",
        "PERSISTENT_1_200": "0.29",
    },
}


@pytest.mark.parametrize("region", sorted(SOURCED))
def test_each_tier_is_priced_only_where_a_source_gave_it(region: str) -> None:
    prices = memory_ledger(config=LedgerConfig(live_prices=False)).deps.prices
    found = {}
    for key in TIERS:
        rate = prices.fsx_rate(region, key)
        if rate is not None:
            assert rate.region == region and rate.source.value == "snapshot"
            found[key] = rate.list_usd
    assert found == {k: Decimal(v) for k, v in SOURCED[region].items()}


def test_each_region_names_its_own_source_and_date() -> None:
    prices = memory_ledger(config=LedgerConfig(live_prices=False)).deps.prices
    east = prices.fsx_rate("us-east-1", "SCRATCH_2")
    west = prices.fsx_rate("us-west-2", "SCRATCH_2")
    assert east is not None and west is not None
    assert east.checked_on.isoformat() == "2026-12-01" and "c3x.dev" in east.note
    assert west.checked_on.isoformat() == "2026-07-14"
    assert "AmazonFSx/current/us-west-2/index.json" in west.note
    assert "USW2-Storage.SSD.200" in west.note


def test_a_region_the_snapshot_lacks_is_unpriced_not_another_regions() -> None:
    prices = memory_ledger(config=LedgerConfig(live_prices=False)).deps.prices
    assert prices.fsx_rate("eu-west-1", "SCRATCH_2") is None
    assert prices.fsx_rate("us-west-2", "PERSISTENT_2_125") is None  # us-east-1 has it
