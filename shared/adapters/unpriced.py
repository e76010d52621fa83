"""The records waiting for a price (instance heads, sealed segments, checkpoint heads), as
the unpriced index lists them (``shared.adapters.ledger_schema.UNPRICED_INDEX``), read
into the records they are."""

from __future__ import annotations

from shared.adapters import ledger_schema as schema
from shared.adapters.checkpoint_store import checkpoint_of
from shared.adapters.instance_store import SealedSegment, head_of, sealed_of
from shared.adapters.table import Table
from shared.domain.checkpoint import CheckpointHead
from shared.domain.instance import InstanceHead

Unpriced = InstanceHead | SealedSegment | CheckpointHead


def unpriced_records(table: Table) -> list[Unpriced]:
    """Every instance head, sealed segment (not voided) and checkpoint head the unpriced
    index lists (one Query of the index): the records the price backfill prices."""
    found: list[Unpriced] = []
    for item in table.query(schema.UNPRICED, index=schema.UNPRICED_INDEX.name):
        kind = item.get("kind")
        if kind == "instance":
            found.append(head_of(item))
        elif kind == "segment" and not item.get("void"):
            found.append(sealed_of(item))
        elif kind == "checkpoint":
            found.append(checkpoint_of(item))
    return found
