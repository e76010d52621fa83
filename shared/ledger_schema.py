"""The ledger table's shape, in one place: the CDK construct and the local emulator
both build the table from these definitions. The record layout and access patterns
are in ``shared.adapters.keys``; only two sparse indexes remain (instances that are
running or accruing, for the sweeps; records still waiting for a price)."""

from __future__ import annotations

from dataclasses import dataclass

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
