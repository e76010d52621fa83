"""Responses of the job routes: the list, one job, its line items, timeline, estimate."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import MISSING, Field

from shared.api.models.base import Day, Instant, Money, Reply

Status = Literal["running", "stopped", "interrupted", "complete"]


class CostParts(Reply):
    """A job's cost by component (``ml_storage``, ``warm_pool``: a SageMaker job;
    ``wasted_reserved``: unused reserved capacity; ``fsx``: FSx for Lustre file systems;
    absent otherwise)."""

    total: Money
    instance: Money
    ebs: Money
    checkpoint_storage: Money
    wasted_rerun: Money
    wasted_idle: Money
    ml_storage: Money | MISSING = MISSING
    warm_pool: Money | MISSING = MISSING
    wasted_reserved: Money | MISSING = MISSING
    fsx: Money | MISSING = MISSING


class JobWarning(Reply):
    kind: str
    detail: str


class ReservationUse(Reply):
    """A reservation (capacity block, ODCR) charging the job its unused time."""

    reservation_id: str
    kind: str
    instance_type: str
    instance_count: int
    reserved_instance_seconds: int
    used_instance_seconds: int
    unused_instance_seconds: int
    utilization: Money | None
    usd_per_instance_hour: Money | None
    wasted_reserved_usd: Money | None
    forecast: str | None
    unused_fraction_at_current_pace: Money | None
    notes: list[str]


class JobSummary(Reply):
    """The replay contract's job object (docs/cost-rules.md), plus extra keys; the managed keys
    (``training_*``, ``managed_spot_saving``, ``reservations``) only where the job has them."""

    job_id: str
    tags: dict[str, str]
    accounts: list[str]
    status: Status
    cost_usd: CostParts
    list_cost_usd: CostParts
    instance_seconds: int
    checkpoints: int
    interruptions: int
    complete: bool
    unconfirmed: list[str]
    warnings: list[JobWarning]
    estimated: bool
    as_of: Instant
    started_at: Instant | None
    ended_at: Instant | None
    wall_clock_seconds: int
    burn_rate_usd_per_hour: Money
    tag_conflicts: dict[str, list[str]]
    price_sources: list[str]
    unpriced: list[str]
    checkpoint_objects: int
    last_checkpoint_at: Instant | None
    last_checkpoint_step: int | None
    checkpoint_cadence_seconds: int | None
    rebalance_recommendations: int
    spend_at_risk_usd: Money
    cost_per_1k_steps_usd: Money | None
    steps_per_hour: Money | None
    cost_per_million_tokens_usd: Money | None
    idle_seconds: int
    warmup_seconds: int | None
    warmup_usd: Money | None
    # Rule 10: measured or null ("not measured"), never a default.
    accelerator_seconds: int | None
    accelerator_counts_unknown: list[str]
    utilization: str | None
    utilization_measured_share: str | None
    effective_accelerator_hours: Money | None
    usd_per_accelerator_hour: Money | None
    training_jobs: list[str] | MISSING = MISSING
    training_job_name: str | MISSING | None = MISSING
    managed_spot_saving: Money | MISSING | None = MISSING
    reservations: list[ReservationUse] | MISSING = MISSING
    # The FSx for Lustre file systems charged to the job (cost rule 13).
    file_systems: list[str] | MISSING = MISSING


class RateUsed(Reply):
    """The rate a segment is priced at: a fixed rate, or a (spot) price series."""

    since: Instant
    source: str
    checked_on: str
    region: str
    list_usd_per_hour: Money | MISSING = MISSING
    effective_usd_per_hour: Money | MISSING = MISSING
    series: str | MISSING | None = MISSING


class SegmentFields(Reply):
    start: Instant
    end: Instant | None
    billed_seconds: int
    state: Literal["closed", "open"]
    priced: bool
    cost_usd: Money | None
    list_cost_usd: Money | None
    inferred: bool
    rates: list[RateUsed]


class InstanceCost(Reply):
    instance_id: str
    instance_type: str
    account: str
    region: str
    lifecycle: str
    inferred: bool
    instance_usd: Money
    ebs_usd: Money
    billed_seconds: int
    running_since: Instant | None
    burn_rate_usd_per_hour: Money
    segments: list[SegmentFields]


class JobDetail(JobSummary):
    """The summary plus what each unconfirmed item means and per-instance figures."""

    unconfirmed_details: dict[str, str]
    instances: list[InstanceCost]


class JobsPage(Reply):
    model_config = Reply.model_config | {"populate_by_name": True}

    jobs: list[JobSummary]
    next_token: str | None = Field(description="pass it back for the next page; null: last")
    from_: Day = Field(alias="from")
    to: Day


class _LineHead(Reply):
    kind: str
    at: Instant | None


class _SegmentHead(_LineHead):
    kind: Literal["segment"]
    instance_id: str
    instance_type: str | None


class SegmentLine(SegmentFields, _SegmentHead):
    """A segment: the instance, then the segment's own figures (as in ``instances``)."""


class InterruptionLine(_LineHead):
    kind: Literal["interruption"]
    instance_id: str
    action: str


class IdleLine(_LineHead):
    kind: Literal["idle"]
    instance_id: str
    start: Instant
    end: Instant | None


class CheckpointLine(_LineHead):
    kind: Literal["checkpoint"]
    step: int | None
    object: str
    size_bytes: int
    deleted_at: Instant | None


LineItem = Annotated[
    SegmentLine | InterruptionLine | IdleLine | CheckpointLine, Field(discriminator="kind")
]


class JobItems(Reply):
    job_id: str
    items: list[LineItem]
    next_token: str | None


class TimelinePoint(Reply):
    at: Instant
    total_usd: Money
    instance_usd: Money
    ebs_usd: Money
    checkpoint_storage_usd: Money


class Timeline(Reply):
    job_id: str
    points: list[TimelinePoint]


class Range(Reply):
    low: Money
    high: Money


class Estimate(Reply):
    job_id: str
    target_steps: int
    current_step: int
    remaining_steps: int
    hours: Range
    cost_usd: Range
    total_at_finish_usd: Range
    assumptions: list[str]
    as_of: Instant
