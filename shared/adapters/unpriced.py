"""The records waiting for a price (instance heads, sealed segments, checkpoint heads), as
the unpriced index lists them (``shared.adapters.ledger_schema.UNPRICED_INDEX``)."""

from __future__ import annotations

from shared.adapters import ledger_schema as schema
from shared.adapters.table import Item, Table


def unpriced_records(table: Table) -> list[Item]:
    """Every record the unpriced index lists (one Query of the index)."""
    return list(table.query(schema.UNPRICED, index=schema.UNPRICED_INDEX.name))
