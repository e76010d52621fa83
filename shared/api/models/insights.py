"""Responses of /compare, /idle, /change and /prices."""

from __future__ import annotations

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
    checkpoints: int
    interruptions: int
    accelerator_seconds: int | None
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
    steps: int | None
    cost_per_1k_steps_usd: Money | None


class ChangeParts(Reply):
    """usage + rate + other = the change in total spend."""

    total_usd: Money
    accelerator_usd: Money
    usage_usd: Money
    rate_usd: Money
    other_usd: Money
    wasted_usd: Money
    wasted_idle_usd: Money
    wasted_rerun_usd: Money
    cost_per_1k_steps_usd: Money | None


class SpendChange(Reply):
    scope: ChangeScope
    before: PeriodFigures
    after: PeriodFigures
    change: ChangeParts
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
