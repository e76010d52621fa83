"""Responses of /compare, /idle, /change and /prices."""

from __future__ import annotations

from typing import Literal

from pydantic import MISSING

from shared.api.models.base import Instant, Money, Reply
from shared.api.models.jobs import Status


class CompareRow(Reply):
    job_id: str
    status: Status
    running: bool
    instance_types: list[str]
    accelerators: list[str]
    lifecycle: str
    instances: int
    instance_hours: Money
    wall_clock_hours: Money
    total_usd: Money
    list_total_usd: Money
    usd_per_hour: Money | None
    usd_per_instance_hour: Money | None
    cost_per_step_usd: Money | None
    cost_per_1k_steps_usd: Money | None
    cost_per_million_tokens_usd: Money | None
    steps: int | None
    steps_per_hour: Money | None
    tokens_per_step: int | None
    tokens_per_second: Money | None
    checkpoints: int
    interruptions: int
    accelerator_seconds: int | None
    accelerator_hours: Money | None
    accelerator_counts_unknown: list[str]
    utilization: str | None
    utilization_measured_share: str | None
    effective_accelerator_hours: Money | None
    usd_per_accelerator_hour: Money | None
    idle_share: str | None
    wasted_rerun_usd: Money
    wasted_idle_usd: Money
    warmup_seconds: int | None
    warmup_usd: Money | None
    complete: bool


class Comparison(Reply):
    """Jobs side by side, with what is not comparable said in ``notes``."""

    jobs: list[CompareRow]
    notes: list[str]


class IdleInstance(Reply):
    instance_id: str
    instance_type: str
    job_id: str
    condition: str
    since: Instant | None
    idle_seconds: int
    cost_usd: Money
    burn_rate_usd_per_hour: Money


class IdleNow(Reply):
    instances: list[IdleInstance]
    as_of: Instant
    estimated: bool


class ChangeScope(Reply):
    project: str | None
    team: str | None
    job_id: str | None


class PeriodFigures(Reply):
    """A scope's figures in one period (accelerator-hours: chip-hours; no steps: those of
    two jobs are never added)."""

    start: Instant
    end: Instant
    jobs: int
    accelerator_hours: Money
    accelerator_usd: Money
    usd_per_accelerator_hour: Money | None
    total_usd: Money
    wasted_idle_usd: Money
    wasted_rerun_usd: Money
    wasted_usd: Money


class ExactParts(Reply):
    total_usd: Money | MISSING = MISSING
    use_usd: Money
    efficiency_usd: Money
    price_usd: Money
    other_usd: Money


class ChangeParts(Reply):
    """use + efficiency + price + other = total, to the cent (docs/efficiency.md)."""

    total_usd: Money
    use_usd: Money
    efficiency_usd: Money
    price_usd: Money
    other_usd: Money
    exact: ExactParts
    wasted_usd: Money
    wasted_idle_usd: Money
    wasted_rerun_usd: Money


class JobPeriodFigures(Reply):
    accelerator_hours: Money
    hours_are: Literal["accelerator-hours", "instance-hours"]
    accelerator_usd: Money
    usd_per_accelerator_hour: Money | None
    total_usd: Money
    steps: int | None
    cost_per_1k_steps_usd: Money | None
    utilization: str | None


class JobChangeParts(Reply):
    total_usd: Money
    use_usd: Money
    efficiency_usd: Money
    price_usd: Money
    other_usd: Money
    exact: ExactParts


class JobChange(Reply):
    """One job's own split; ``efficiency_basis`` what its efficiency is measured on."""

    job_id: str
    efficiency_basis: Literal["steps", "utilization", "none", "one_period"]
    before: JobPeriodFigures
    after: JobPeriodFigures
    change: JobChangeParts


class OtherJobs(Reply):
    jobs: int
    total_usd: Money


class SpendChange(Reply):
    scope: ChangeScope
    before: PeriodFigures
    after: PeriodFigures
    change: ChangeParts
    by_job: list[JobChange]
    others: OtherJobs
    efficiency_bases: dict[str, str]
    notes: list[str]
    estimated: bool
    as_of: Instant


class Price(Reply):
    instance_type: str
    region: str
    platform: str
    list_usd_per_hour: Money
    effective_usd_per_hour: Money
    source: str
    checked_on: str


class EfficiencyRow(Reply):
    """A job's efficiency: measured or null ("not measured"), never a default."""

    job_id: str
    status: Status
    instance_types: list[str]
    accelerator_hours: Money | None
    effective_accelerator_hours: Money | None
    utilization: str | None
    utilization_measured_share: str | None
    accelerator_counts_unknown: list[str]
    steps: int | None
    steps_per_hour: Money | None
    tokens_per_step: int | None
    tokens_per_second: Money | None
    total_usd: Money
    usd_per_accelerator_hour: Money | None
    cost_per_1k_steps_usd: Money | None
    cost_per_million_tokens_usd: Money | None
    interruptions: int
    wasted_rerun_usd: Money
    rerun_share_of_instance_cost: str | None
    wasted_idle_usd: Money
    checkpoint_storage_usd: Money
    complete: bool


class StoragePoint(Reply):
    at: Instant
    gb: Money


class JobEfficiency(EfficiencyRow):
    """The row plus checkpoint storage held (GB, 2^30 bytes) over time."""

    storage_gb: list[StoragePoint]
    as_of: Instant
    estimated: bool


class EfficiencyTotals(Reply):
    jobs: int
    accelerator_hours: Money | None
    effective_accelerator_hours: Money | None
    jobs_measured: int
    total_usd: Money
    usd_per_accelerator_hour: Money | None
    interruptions: int
    wasted_rerun_usd: Money
    wasted_idle_usd: Money


class TeamEfficiency(Reply):
    """A scope's jobs (the costliest 100; ``more_jobs`` the rest) and the sums that add."""

    jobs: list[EfficiencyRow]
    more_jobs: int
    totals: EfficiencyTotals
    notes: list[str]
    as_of: Instant
    estimated: bool
