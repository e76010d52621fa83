"""Frozen domain models of the ledger.

They carry no AWS code: the services build them from events and repositories,
the pure rules in ``costing`` turn them into money, and the ledger stores them.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from shared.domain.base import Rate as Rate
from shared.domain.base import RateSource as RateSource
from shared.domain.instance import InstanceProfile as InstanceProfile
from shared.domain.instance import Volume as Volume

InstanceStateName = Literal[
    "pending", "running", "stopping", "stopped", "shutting-down", "terminated"
]
# Platforms (PlatformDetails, lower case) billed by the started hour, not by the second.
HOURLY_PLATFORMS: tuple[str, ...] = ("suse",)
# States that end a billed running segment (SPEC rule 1).
CLOSING_STATES: frozenset[str] = frozenset({"stopping", "shutting-down", "stopped", "terminated"})


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RateStep(Frozen):
    """A rate in effect from ``since`` on (spot prices change inside a segment)."""

    since: datetime
    rate: Rate


class Transition(Frozen):
    """One EC2 state change, identified by its EventBridge event id."""

    event_id: str
    at: datetime
    state: InstanceStateName
    # Not from an event: the hourly sweep's best reading of EC2 (a missed event).
    inferred: bool = False


class SpotNotice(Frozen):
    """A spot interruption warning (``action`` terminate/stop/hibernate) or a rebalance
    recommendation (``action`` "rebalance"): early risk, no cost of its own."""

    event_id: str
    at: datetime
    action: str

    @property
    def is_interruption(self) -> bool:
        return self.action != "rebalance"


Signal = Literal["accelerator", "cpu"]
AlarmValue = Literal["OK", "ALARM", "INSUFFICIENT_DATA"]


class AlarmTransition(Frozen):
    """A utilization alarm of an instance changing state (``at`` = the state's timestamp)."""

    event_id: str
    at: datetime
    signal: Signal
    state: AlarmValue


class Segment(Frozen):
    """A billed running span of one instance; ``end`` is None while it runs."""

    instance_id: str
    start: datetime
    end: datetime | None
    start_event_id: str
    end_event_id: str | None = None
    end_state: str | None = None


class PricedSegment(Frozen):
    segment: Segment
    steps: tuple[RateStep, ...]  # empty: unpriced
    billed_seconds: int
    list_usd: Decimal | None
    effective_usd: Decimal | None

    @property
    def priced(self) -> bool:
        return bool(self.steps)


class UnpricedItem(Frozen):
    kind: Literal["ec2", "spot", "ebs", "s3"]
    key: str  # instance type or volume type
    region: str
    instance_id: str


class InstanceCost(Frozen):
    instance_id: str
    instance_type: str
    segments: tuple[PricedSegment, ...]
    instance_list_usd: Decimal
    instance_usd: Decimal
    ebs_usd: Decimal
    billed_seconds: int
    running_since: datetime | None
    hourly_rate_usd: Decimal  # effective burn rate now (0 when not running)
    unpriced: tuple[UnpricedItem, ...]
    terminated: bool


class JobCost(Frozen):
    """A job's cost accrued to ``as_of``: what the API and replay report."""

    job_id: str
    as_of: datetime
    tags: dict[str, str]
    tag_conflicts: dict[str, tuple[str, ...]]
    status: Literal["running", "stopped", "interrupted", "complete"]
    instances: tuple[InstanceCost, ...]
    instance_usd: Decimal
    instance_list_usd: Decimal
    ebs_usd: Decimal
    checkpoint_storage_usd: Decimal
    wasted_rerun_usd: Decimal
    wasted_idle_usd: Decimal
    burn_rate_usd_per_hour: Decimal
    billed_seconds: int
    started_at: datetime | None
    unconfirmed: tuple[str, ...]
    unpriced: tuple[UnpricedItem, ...]
    price_sources: tuple[str, ...]
    checkpoints: int = 0
    checkpoint_objects: int = 0
    last_checkpoint_at: datetime | None = None
    last_checkpoint_step: int | None = None
    interruptions: int = 0
    rebalance_recommendations: int = 0
    spend_at_risk_usd: Decimal = Decimal(0)
    cost_per_1k_steps_usd: Decimal | None = None
    steps_per_hour: Decimal | None = None
    cost_per_million_tokens_usd: Decimal | None = None
    checkpoint_cadence_seconds: int | None = None
    idle_seconds: int = 0
    warmup_seconds: int | None = None
    warmup_usd: Decimal | None = None

    @property
    def total_usd(self) -> Decimal:
        return self.instance_usd + self.ebs_usd + self.checkpoint_storage_usd


class InstanceRecord(Frozen):
    """The stored state of one tracked instance: its profile, state history and rates.

    Segments are derived from ``transitions`` by ``costing.fold_segments``, so
    duplicated and reordered events converge to the same record.
    """

    profile: InstanceProfile
    job_id: str
    transitions: tuple[Transition, ...] = ()
    spot_notices: tuple[SpotNotice, ...] = ()
    alarm_transitions: tuple[AlarmTransition, ...] = ()
    # Rate steps of each segment, by the segment's start event id.
    segment_rates: dict[str, tuple[RateStep, ...]] = Field(default_factory=dict)
    # $/GB-month of each attached volume type.
    volume_rates: dict[str, Rate] = Field(default_factory=dict)
    # Segment start event ids whose rate steps were resolved after the segment closed.
    final_rates: frozenset[str] = frozenset()
    # When each segment (by start event id) first appeared in the ledger: tells
    # which day boundaries saw it open and marked its job active.
    segment_seen_at: dict[str, datetime] = Field(default_factory=dict)
    # UTC dates this instance has marked its job active on.
    days_touched: frozenset[str] = frozenset()
    version: int = 0

    @property
    def instance_id(self) -> str:
        return self.profile.instance_id


class ObjectWrite(Frozen):
    event_id: str
    at: datetime
    size_bytes: int = Field(ge=0)
    sequencer: str = ""


class ObjectDelete(Frozen):
    event_id: str
    at: datetime
    sequencer: str = ""


class CheckpointObject(Frozen):
    """One S3 object of a job's checkpoints: its writes and deletions, in any order.

    An overwrite ends the previous version's storage; a deletion ends the last.
    """

    bucket: str
    key: str
    job_id: str
    step: int | None = None
    region: str
    writes: tuple[ObjectWrite, ...] = ()
    deletes: tuple[ObjectDelete, ...] = ()
    rate: Rate | None = None  # $/GB-month of S3 Standard in the bucket's region
    version: int = 0

    @property
    def first_written_at(self) -> datetime | None:
        return min((w.at for w in self.writes), default=None)


class StoredSpan(Frozen):
    """A stored object version's lifetime: ``end`` None while it still exists."""

    start: datetime
    end: datetime | None
    size_bytes: int
