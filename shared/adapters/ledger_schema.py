"""The ledger table's shape, in one place: the CDK construct, the local emulator and
both table versions (``DynamoTable``, ``MemoryTable``) take their indexes from these
definitions, and the stores write a record's index entries through ``index_entries``
from its ``IndexFacts`` (``shared.domain.index_facts``). The record layout and access
patterns are in ``shared.adapters.keys``. The sparse indexes: instances that are
running or accruing and live reservations, for the sweeps; records still waiting for a
price; every job's rollups; alerts not yet accepted by SNS."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shared.domain.index_facts import IndexFacts

PARTITION_KEY = "pk"
SORT_KEY = "sk"
TTL_ATTRIBUTE = "expires_at"


@dataclass(frozen=True)
class Index:
    name: str
    partition_key: str
    sort_key: str


OPEN_INDEX = Index("open-index", "gsi_open_pk", "gsi_open_sk")
UNPRICED_INDEX = Index("unpriced-index", "gsi_unpriced_pk", "gsi_unpriced_sk")

ROLLUPS_INDEX = Index("rollups-index", "gsi_rollups_pk", "gsi_rollups_sk")

PENDING_INDEX = Index("pending-index", "gsi_pending_pk", "gsi_pending_sk")

INDEXES: tuple[Index, ...] = (OPEN_INDEX, UNPRICED_INDEX, ROLLUPS_INDEX, PENDING_INDEX)
# Index name -> (its partition key attribute, its sort key attribute), for the tables.
INDEX_KEYS: dict[str, tuple[str, str]] = {i.name: (i.partition_key, i.sort_key) for i in INDEXES}

# Partitions of the indexes that are not a sweep's (``IndexFacts.sweep`` is the open-index's).
UNPRICED = "UNPRICED"
ROLLUPS = "ROLLUPS"
PENDING = "PENDING"


def index_entries(facts: IndexFacts, sort: str, kind: str = "") -> dict[str, str]:
    """The index key attributes of a record with ``facts``: ``sort`` orders it in each
    index (in the unpriced-index after its ``kind``, so the backfill knows what it is)."""
    entries: dict[str, str] = {}
    if facts.sweep is not None:
        entries |= {OPEN_INDEX.partition_key: facts.sweep, OPEN_INDEX.sort_key: sort}
    if facts.unpriced:
        entries |= {
            UNPRICED_INDEX.partition_key: UNPRICED,
            UNPRICED_INDEX.sort_key: f"{kind}#{sort}",
        }
    if facts.rollup:
        entries |= {ROLLUPS_INDEX.partition_key: ROLLUPS, ROLLUPS_INDEX.sort_key: sort}
    if facts.pending:
        entries |= {PENDING_INDEX.partition_key: PENDING, PENDING_INDEX.sort_key: sort}
    return entries


def index_attributes(index: Index) -> tuple[str, str]:
    """The attributes that put a record in ``index`` (removed: it leaves the index)."""
    return (index.partition_key, index.sort_key)


def create_table_request(table_name: str) -> dict[str, object]:
    """The CreateTable request for the local emulator (on-demand, all string keys)."""
    attributes = {PARTITION_KEY, SORT_KEY}
    for index in INDEXES:
        attributes |= {index.partition_key, index.sort_key}
    return {
        "TableName": table_name,
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [
            {"AttributeName": name, "AttributeType": "S"} for name in sorted(attributes)
        ],
        "KeySchema": [
            {"AttributeName": PARTITION_KEY, "KeyType": "HASH"},
            {"AttributeName": SORT_KEY, "KeyType": "RANGE"},
        ],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": index.name,
                "KeySchema": [
                    {"AttributeName": index.partition_key, "KeyType": "HASH"},
                    {"AttributeName": index.sort_key, "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
            for index in INDEXES
        ],
    }
