"""The product's configuration model, shared by CDK context and the functions.

CDK validates it once at synth and hands it to every function as JSON in one
environment variable; the functions validate it again lazily on first use.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from decimal import Decimal
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from shared.api.access import AccessConfig
from shared.app.measurement_config import MeasurementConfig
from shared.domain.budgets import Budget

DEFAULT_GROUPING_TAG_KEYS = ("project", "team", "owner", "environment", "experiment", "cost-center")
# No hourly (or GB-month) price is above this: a larger figure is a typo.
MAX_PRICE = Decimal(100_000)
_TAG_KEY = re.compile(r"^[\w.:/=+\-@ ]{1,128}$")


class _Config(BaseModel):
    """Base of the configuration models.

    Cold start: every pydantic model of the Lambda code is built on first use, not at
    import. One idiom: ``defer_build=True`` in the model's base config (pydantic builds
    the validator the first time the model validates), and a model-typed default is a
    ``Field(default_factory=...)``, never an instance made at import (it would build the
    model; ``tests/unit/test_cold_import.py`` guards it)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class TrackingConfig(_Config):
    """Which instances count, and how they map to jobs (SPEC "Jobs and tags")."""

    job_tag_keys: tuple[str, ...] = Field(default=("training-job",), min_length=1)
    tracked_families: tuple[str, ...] = ("trn", "inf", "p", "g")
    grouping_tag_keys: tuple[str, ...] = DEFAULT_GROUPING_TAG_KEYS

    @field_validator("job_tag_keys", "grouping_tag_keys")
    @classmethod
    def _tag_keys(cls, keys: tuple[str, ...]) -> tuple[str, ...]:
        for key in keys:
            if not _TAG_KEY.match(key):
                raise ValueError(f"not a valid EC2 tag key: {key!r}")
        return keys

    @field_validator("tracked_families")
    @classmethod
    def _families(cls, families: tuple[str, ...]) -> tuple[str, ...]:
        for family in families:
            if not re.fullmatch(r"[a-z]+", family):
                raise ValueError(f"a family prefix is lower-case letters, got {family!r}")
        return families

    def job_of(self, instance_id: str, instance_type: str, tags: dict[str, str]) -> str | None:
        """The job an instance belongs to, or None when it is not tracked."""
        for key in self.job_tag_keys:
            value = tags.get(key, "").strip()
            if value:
                return value
        if self.is_tracked_family(instance_type):
            return f"untagged:{instance_id}"
        return None

    def is_tracked_family(self, instance_type: str) -> bool:
        """``p`` matches p4d and p5en but not a family that merely starts with the letter."""
        family = instance_type.split(".", 1)[0]
        for prefix in self.tracked_families:
            rest = family[len(prefix) :]
            if family.startswith(prefix) and rest[:1].isdigit():
                return True
        return False


class SpotPricePoint(_Config):
    """One price of a spot price history: ``usd`` holds from ``from`` until the next."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, defer_build=True)

    from_: datetime = Field(alias="from")
    usd: Decimal = Field(gt=0, le=MAX_PRICE)

    @field_validator("from_")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            raise ValueError("a time with a zone, e.g. 2026-11-01T00:00:00Z")
        return value.astimezone(UTC)


class PriceOverrides(_Config):
    """Prices that win over every other source (CDK context or a replay scenario)."""

    ec2: dict[str, Decimal] = Field(default_factory=dict)
    # A spot price per type: one price, or a history (each price from its time on).
    spot: dict[str, Decimal | tuple[SpotPricePoint, ...]] = Field(default_factory=dict)
    ebs_gb_month: dict[str, Decimal] = Field(default_factory=dict)
    # Provisioned EBS performance, per volume type: $/IOPS-month and $/(MB/s)-month.
    ebs_iops_month: dict[str, Decimal] = Field(default_factory=dict)
    ebs_throughput_month: dict[str, Decimal] = Field(default_factory=dict)
    s3_gb_month: Decimal | None = Field(default=None, gt=0, le=MAX_PRICE)
    # SageMaker's own rates (ml.* types) and ML storage volumes.
    sagemaker: dict[str, Decimal] = Field(default_factory=dict)
    sagemaker_storage_gb_month: Decimal | None = Field(default=None, gt=0, le=MAX_PRICE)
    # When these prices were set (their "checked" date in every rate they give).
    as_of: date | None = None
    # Prices of one region, winning there over the ones above (which hold in every region):
    # {"eu-west-1": {"ec2": {"p4d.24xlarge": "..."}}}. ``for_region`` merges them.
    regions: dict[str, PriceOverrides] = Field(default_factory=dict)

    @field_validator("regions")
    @classmethod
    def _flat_regions(cls, regions: dict[str, PriceOverrides]) -> dict[str, PriceOverrides]:
        for region, prices in regions.items():
            if not re.fullmatch(r"[a-z]{2}(-[a-z]+)+-\d+", region):
                raise ValueError(f"prices.regions: {region!r} is not a region name (eu-west-1)")
            if prices.regions or prices.as_of is not None:
                raise ValueError(
                    f"prices.regions.{region}: give prices only (no regions or as_of inside)"
                )
        return regions

    def for_region(self, region: str) -> PriceOverrides:
        """The prices that hold in ``region``: its own, then those for every region."""
        own = self.regions.get(region)
        if own is None:
            return self
        merged = {
            name: {**getattr(self, name), **getattr(own, name)}
            for name in (
                "ec2",
                "spot",
                "ebs_gb_month",
                "ebs_iops_month",
                "ebs_throughput_month",
                "sagemaker",
            )
        }
        return self.model_copy(
            update={
                **merged,
                "s3_gb_month": own.s3_gb_month or self.s3_gb_month,
                "sagemaker_storage_gb_month": own.sagemaker_storage_gb_month
                or self.sagemaker_storage_gb_month,
                "regions": {},
            }
        )

    @field_validator("ec2", "ebs_gb_month", "ebs_iops_month", "ebs_throughput_month", "sagemaker")
    @classmethod
    def _positive(cls, prices: dict[str, Decimal]) -> dict[str, Decimal]:
        for key, price in prices.items():
            if not 0 < price <= MAX_PRICE:
                raise ValueError(f"price for {key!r} must be above 0 and at most {MAX_PRICE}")
        return prices

    @field_validator("spot")
    @classmethod
    def _spot(
        cls, prices: dict[str, Decimal | tuple[SpotPricePoint, ...]]
    ) -> dict[str, Decimal | tuple[SpotPricePoint, ...]]:
        for key, price in prices.items():
            if isinstance(price, Decimal) and not 0 < price <= MAX_PRICE:
                raise ValueError(f"spot price for {key!r} must be above 0 and at most {MAX_PRICE}")
            if isinstance(price, tuple) and not price:
                raise ValueError(f"spot price history for {key!r} is empty")
        return prices


class CheckpointConfig(_Config):
    """Which S3 objects are checkpoints, and of which job (SPEC "Jobs and tags")."""

    buckets: tuple[str, ...] = ()
    # A regex on the (decoded) object key with a named group `job` and optionally `step`.
    key_pattern: str = r"^runs/(?P<job>[^/]+)/step-(?P<step>\d+)/"
    # A job tag giving tokens per step, for cost per million tokens.
    tokens_per_step_tag: str = "tokens-per-step"
    # The file name of a step's completion marker (e.g. "_COMPLETE"): where set, a
    # checkpoint counts (for rerun waste and auto-stop) only once its marker exists.
    completion_marker: str | None = Field(default=None, min_length=1, max_length=255)
    # Without a marker, a step is complete once nothing of it was written for this long.
    quiet_minutes: int = Field(default=10, ge=1, le=1440)

    @field_validator("key_pattern")
    @classmethod
    def _pattern(cls, pattern: str) -> str:
        try:
            compiled = re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from exc
        if "job" not in compiled.groupindex:
            raise ValueError("the pattern needs a named group `job`, e.g. (?P<job>[^/]+)")
        return pattern

    def match(self, bucket: str, key: str) -> tuple[str, str | None] | None:
        """(job, step as written) of a checkpoint object, or None when it names no job."""
        if self.buckets and bucket not in self.buckets:
            return None
        found = re.search(self.key_pattern, key)
        if found is None or not found.group("job"):
            return None
        return found.group("job"), found.groupdict().get("step")


class MetricRef(_Config):
    """A CloudWatch metric of one instance: namespace, name and the instance-id dimension."""

    namespace: str = Field(min_length=1, max_length=255)
    metric: str = Field(min_length=1, max_length=255)
    dimension: str = Field(default="InstanceId", min_length=1, max_length=255)


def _metric(namespace: str, metric: str) -> Any:
    """A MetricRef default, made when a config is (see ``_Config``)."""
    return Field(default_factory=partial(MetricRef, namespace=namespace, metric=metric))


class UtilizationConfig(_Config):
    """Idle detection (SPEC "Metrics for idle detection"): which metrics, how low, how long."""

    neuron: MetricRef = _metric("NeuronMonitor", "neuroncore_utilization")
    gpu: MetricRef = _metric("CWAgent", "nvidia_smi_utilization_gpu")
    cpu: MetricRef = _metric("AWS/EC2", "CPUUtilization")
    # Families whose accelerator is a NeuronCore; the other tracked families are GPUs.
    neuron_families: tuple[str, ...] = ("trn", "inf")
    accelerator_low_percent: float = Field(default=5, gt=0, le=100)
    cpu_low_percent: float = Field(default=10, gt=0, le=100)
    window_minutes: int = Field(default=30, ge=5, le=1440)
    period_seconds: int = Field(default=300)
    alarm_prefix: str = Field(default="costtracker-", pattern=r"^[A-Za-z0-9_.-]{1,64}$")

    @field_validator("period_seconds")
    @classmethod
    def _period(cls, period: int) -> int:
        if period not in (60, 300, 900, 3600):
            raise ValueError("period_seconds must be 60, 300, 900 or 3600")
        return period

    def accelerator_metric(self, instance_type: str) -> MetricRef | None:
        """The accelerator metric for an instance type; None for a CPU-only node."""
        tracking = TrackingConfig(tracked_families=self.neuron_families)
        if tracking.is_tracked_family(instance_type):
            return self.neuron
        gpu = TrackingConfig(tracked_families=("p", "g"))
        return self.gpu if gpu.is_tracked_family(instance_type) else None

    def signal_of(self, namespace: str, metric: str) -> str | None:
        """``accelerator`` or ``cpu`` for an alarm's metric; None for any other metric."""
        for ref, signal in (
            (self.neuron, "accelerator"),
            (self.gpu, "accelerator"),
            (self.cpu, "cpu"),
        ):
            if (ref.namespace, ref.metric) == (namespace, metric):
                return signal
        return None

    def dimension_for(self, namespace: str, metric: str) -> str:
        for ref in (self.neuron, self.gpu, self.cpu):
            if (ref.namespace, ref.metric) == (namespace, metric):
                return ref.dimension
        return "InstanceId"


class AutoStopConfig(_Config):
    """Checkpoint-safe auto-stop of idle instances: opt-in per instance by tag."""

    enabled: bool = False
    dry_run: bool = True
    # Only instances carrying this tag with value "true" may be stopped.
    tag_key: str = "costtracker:auto-stop"
    # A job tagged so declares it writes no checkpoints: stop on idle at once.
    no_checkpoints_tag_key: str = "costtracker:no-checkpoints"


class BudgetingConfig(_Config):
    """How budgets forecast and spot anomalies."""

    # A job tag declaring the run's expected length in hours (forecasts of total budgets).
    expected_duration_tag: str = "expected-duration-hours"
    # Unused (forecasts follow declared ends or each job's run): kept for old context.
    forecast_horizon_hours: int = Field(default=24, ge=1, le=24 * 90)
    # A day's spend above this multiple of the trailing 7-day mean is an anomaly.
    anomaly_multiple: Decimal = Field(default=Decimal(3), gt=1)
    anomaly_min_history_days: int = Field(default=3, ge=1, le=7)


class SummaryConfig(_Config):
    """The daily summary: when it runs (UTC) and which tags every instance must carry."""

    time_utc: str = Field(default="00:15", pattern=r"^([01]\d|2[0-3]):[0-5]\d$")
    required_tags: tuple[str, ...] = ("project", "team", "owner")
    # The FOCUS export's version: "1.3" adds the allocation columns (how each row went
    # to its job); "1.2" is what the FinOps Foundation's validator judges offline.
    focus_version: Literal["1.2", "1.3"] = "1.2"


class ReconcileConfig(_Config):
    """Reconciliation with Cost Explorer (opt-in: each request costs $0.01)."""

    enabled: bool = False
    # Days after which a day's bill is expected to be final.
    settle_days: int = Field(default=2, ge=1, le=30)
    # AWS Data Exports (CUR 2.0, Parquet) to reconcile by resource id: the bucket and the
    # export's prefix (the objects are <prefix>/.../BILLING_PERIOD=YYYY-MM/...parquet).
    data_exports_bucket: str | None = Field(
        default=None, pattern=r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$"
    )
    data_exports_prefix: str = Field(default="", max_length=512)


class AccountsConfig(_Config):
    """Many accounts: the organisation whose accounts may send events to the tracker's
    bus, and the read-only role the tracker assumes in each member account."""

    # Organizations id (o-...): the bus accepts PutEvents from its accounts.
    organization_id: str | None = Field(default=None, pattern=r"^o-[a-z0-9]{10,32}$")
    # The role the member stack creates and the tracker assumes for Describe calls.
    member_role_name: str = Field(default="costtracker-member-read", pattern=r"^[\w+=,.@-]{1,64}$")


class ReservationConfig(_Config):
    """Capacity Blocks and ODCRs: the fees (AWS gives no price for a block) and when a
    reservation counts as underused."""

    # Upfront fee (USD) of a Capacity Block, by reservation id (cr-...).
    fees: dict[str, Decimal] = Field(default_factory=dict)
    # Else the block's effective $/instance-hour by instance type (x count x block hours).
    block_hourly: dict[str, Decimal] = Field(default_factory=dict)
    # An admin alert when a reservation's use over a UTC day is below this fraction.
    underused_below: Decimal = Field(default=Decimal("0.2"), ge=0, le=1)


class LedgerConfig(_Config):
    """What the functions need to know beyond resource names."""

    tracking: TrackingConfig = Field(default_factory=TrackingConfig)
    checkpoint: CheckpointConfig = Field(default_factory=CheckpointConfig)
    utilization: UtilizationConfig = Field(default_factory=UtilizationConfig)
    measurement: MeasurementConfig = Field(default_factory=MeasurementConfig)
    auto_stop: AutoStopConfig = Field(default_factory=AutoStopConfig)
    budgeting: BudgetingConfig = Field(default_factory=BudgetingConfig)
    summary: SummaryConfig = Field(default_factory=SummaryConfig)
    reconcile: ReconcileConfig = Field(default_factory=ReconcileConfig)
    access: AccessConfig = Field(default_factory=AccessConfig)
    accounts: AccountsConfig = Field(default_factory=AccountsConfig)
    budgets: tuple[Budget, ...] = ()
    prices: PriceOverrides = Field(default_factory=PriceOverrides)
    reservations: ReservationConfig = Field(default_factory=ReservationConfig)
    # Savings Plans / reservations: fraction off the on-demand list rate, by
    # instance-type prefix (longest match wins), e.g. {"trn1": "0.30"}.
    discounts: dict[str, Decimal] = Field(default_factory=dict)
    # Ask the Price List API and spot price history (off in the local emulator).
    live_prices: bool = True
    price_max_age_days: int = Field(default=7, ge=1, le=90)

    @field_validator("discounts")
    @classmethod
    def _fractions(cls, discounts: dict[str, Decimal]) -> dict[str, Decimal]:
        for prefix, fraction in discounts.items():
            if not Decimal(0) <= fraction < Decimal(1):
                raise ValueError(f"discount for {prefix!r} must be in [0, 1), got {fraction}")
        return discounts

    @model_validator(mode="after")
    def _budgets(self) -> LedgerConfig:
        ids = [b.budget_id for b in self.budgets]
        if len(set(ids)) != len(ids):
            raise ValueError("budgets: budget_id values must be unique")
        known = self.known_tag_keys()
        for budget in self.budgets:
            budget.check_tag_keys(known)
        return self

    @model_validator(mode="after")
    def _team_tag_key(self) -> LedgerConfig:
        """Team members see jobs by this tag: it must be one the ledger copies onto jobs."""
        key = self.access.team_tag_key
        if key not in self.tracking.grouping_tag_keys:
            raise ValueError(
                f"access.team_tag_key {key!r} is not a grouping tag key "
                f"(tracking.grouping_tag_keys: {', '.join(self.tracking.grouping_tag_keys)}); "
                "add it there or choose one of them"
            )
        return self

    def known_tag_keys(self) -> tuple[str, ...]:
        return (*self.tracking.job_tag_keys, *self.tracking.grouping_tag_keys)

    def discount_for(self, instance_type: str) -> Decimal:
        matches = [p for p in self.discounts if instance_type.startswith(p)]
        return self.discounts[max(matches, key=len)] if matches else Decimal(0)
