"""The ledger table's shape, in one place: the CDK construct and the local
emulator both build the table from these definitions.

Access patterns (all Query or GetItem, never Scan):

| # | question | how |
|---|---|---|
| 1 | an instance's record (event path) | GetItem pk=INST#<id>, sk=INSTANCE (consistent) |
| 2 | one job's cost and items | Query job-index pk=JOB#<job> |
| 3 | all jobs active on a UTC day | Query day-index pk=DAY#<yyyy-mm-dd> |
| 4 | jobs of a project / team in a date range | Query project-/team-index pk=<key>#<value>, |
|  |  | sk between <from> and <to>~ |
| 5 | open segments (to accrue, split at days) | Query open-index pk=OPEN (sparse) |
| 5b | jobs accruing with nothing running (volumes, checkpoints) | open-index pk=ACCRUING |
| 6 | segments still waiting for a price | Query unpriced-index pk=UNPRICED (sparse) |
| 7 | a cached price | GetItem pk=PRICE#<kind>#<region>#<key>, sk=PRICE |
| 8 | a checkpoint object's record (event path) | GetItem pk=CKPT#<bucket>/<key> |
| 9 | objects in checkpoint buckets naming no job | Query pk=UNMATCHED |
| 10 | budgets set through the API | Query pk=BUDGETS |
| 11 | daily summaries of given dates | BatchGetItem pk=SUMMARY#<date> |
| 12 | reconciliations with the bill | BatchGetItem pk=RECONCILIATION#<date> |

Items: instance records (pk INST#), checkpoint objects (pk CKPT#; both carry
the job-index keys, so pattern 2 returns them with the job), job-day markers
(pk JOB#, sk DAY#), cached prices (pk PRICE#), once-only alert markers (pk ONCE#,
with a TTL), the unmatched-object report (pk UNMATCHED), and small TTL markers
for untracked instances.
"""

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


JOB_INDEX = Index("job-index", "gsi_job_pk", "gsi_job_sk")
DAY_INDEX = Index("day-index", "gsi_day_pk", "gsi_day_sk")
PROJECT_INDEX = Index("project-index", "gsi_project_pk", "gsi_project_sk")
TEAM_INDEX = Index("team-index", "gsi_team_pk", "gsi_team_sk")
OPEN_INDEX = Index("open-index", "gsi_open_pk", "gsi_open_sk")
UNPRICED_INDEX = Index("unpriced-index", "gsi_unpriced_pk", "gsi_unpriced_sk")

INDEXES: tuple[Index, ...] = (
    JOB_INDEX,
    DAY_INDEX,
    PROJECT_INDEX,
    TEAM_INDEX,
    OPEN_INDEX,
    UNPRICED_INDEX,
)
# Tag keys with their own index (access pattern 4).
INDEXED_TAGS: dict[str, Index] = {"project": PROJECT_INDEX, "team": TEAM_INDEX}


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
