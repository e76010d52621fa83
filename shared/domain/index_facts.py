"""Which of the ledger's sparse indexes a record belongs in, as facts of the record itself.

One definition for every table version: the stores turn these facts into index key
attributes (``shared.adapters.ledger_schema.index_entries``, named from the same
definitions as the table's GSIs), and both the DynamoDB and the in-memory table answer
index queries from those attributes alone, so the twin cannot index a record that
DynamoDB would not, or miss one.

- ``sweep``: the open-index partition the sweeps read: ``OPEN`` (a segment is running),
  ``ACCRUING`` (stopped, but its volumes still accrue), ``RESERVATIONS`` (a capacity
  reservation the daily refresh still looks at), ``FILE_SYSTEMS`` (an FSx file system not
  yet deleted, for its daily refresh).
- ``unpriced``: the record waits for a price (the price backfill reads these).
- ``pending``: an alert SNS has not accepted yet (the outbox re-sends these).
- ``rollup``: a job's rollup (the job list and the budgets read every one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # the records' modules are loaded by whoever holds a record
    from shared.domain.checkpoint import CheckpointHead
    from shared.domain.instance import InstanceHead
    from shared.domain.managed.training import TrainingHead
    from shared.domain.segments import SegmentCost

Sweep = Literal["OPEN", "ACCRUING", "RESERVATIONS", "FILE_SYSTEMS"]
UNPRICED_PREFIX = "a|unpriced:"  # an accrual component still waiting for a price


@dataclass(frozen=True)
class IndexFacts:
    sweep: Sweep | None = None
    unpriced: bool = False
    pending: bool = False
    rollup: bool = False


NOT_INDEXED = IndexFacts()
ROLLUP = IndexFacts(rollup=True)
PENDING = IndexFacts(pending=True)
REFRESHED_RESERVATION = IndexFacts(sweep="RESERVATIONS")
# An FSx file system not yet deleted: the daily refresh describes it.
REFRESHED_FILE_SYSTEM = IndexFacts(sweep="FILE_SYSTEMS")


def _instance(head: InstanceHead) -> IndexFacts:
    sweep: Sweep | None = None
    if head.open_segment is not None:
        sweep = "OPEN"
    elif head.first_running_at is not None and not head.terminated and head.profile.volumes:
        sweep = "ACCRUING"
    unpriced = any(not s.priced for s in head.segments) or any(
        k.startswith(UNPRICED_PREFIX) for k in head.sealed
    )
    return IndexFacts(sweep=sweep, unpriced=unpriced)


def index_facts(record: InstanceHead | SegmentCost | CheckpointHead | TrainingHead) -> IndexFacts:
    """The indexes ``record`` belongs in (a sealed segment: while it waits for a price)."""
    from shared.domain.instance import InstanceHead
    from shared.domain.segments import SegmentCost

    if isinstance(record, InstanceHead):
        return _instance(record)
    if isinstance(record, SegmentCost):
        return IndexFacts(unpriced=not record.priced)
    return IndexFacts(unpriced=record.rate is None)
