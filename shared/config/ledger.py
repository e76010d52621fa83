"""The product's configuration model, shared by CDK context and the functions.

CDK validates it once at synth and hands it to every function as JSON in one
environment variable; the functions validate it again lazily on first use.
"""

from __future__ import annotations

import re
from decimal import Decimal
from functools import partial
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from shared.config.access import AccessConfig
from shared.config.base import MAX_PRICE as MAX_PRICE
from shared.config.base import _Config
from shared.config.budgets import Budget
from shared.config.measurement import MeasurementConfig
from shared.config.prices import PriceOverrides as PriceOverrides
from shared.config.prices import SpotPricePoint as SpotPricePoint
from shared.config.zones import check_zone

DEFAULT_GROUPING_TAG_KEYS = ("project", "team", "owner", "environment", "experiment", "cost-center")
_TAG_KEY = re.compile(r"^[\w.:/=+\-@ ]{1,128}$")


class TrackingConfig(_Config):
    """Which instances count, and how they map to jobs (docs/cost-rules.md "Jobs and tags")."""

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


class CheckpointConfig(_Config):
    """Which S3 objects are checkpoints, and of which job (docs/cost-rules.md "Jobs and tags")."""

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
    """Idle detection (docs/cost-rules.md "Metrics for idle detection"): which metrics, how low,
    how long."""

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


class BudgetActionsConfig(_Config):
    """Budgets that act (stops, launch denial). Off: budgets' actions are announced as a
    dry run whatever they say, and the stack grants no stop or IAM permission for them."""

    enabled: bool = False
    # How deny_launch denies: "iam", a policy in each principal's own account attached to
    # deny_principals; "scp", a service control policy on the scope's member accounts
    # (the tracker in the management account or an Organizations delegated admin).
    deny_with: Literal["iam", "scp"] = "iam"
    # IAM principals (role, user or group ARNs, each naming its account) for "iam".
    deny_principals: tuple[str, ...] = ()

    @field_validator("deny_principals")
    @classmethod
    def _principals(cls, arns: tuple[str, ...]) -> tuple[str, ...]:
        for arn in arns:
            if not re.fullmatch(r"arn:aws[\w-]*:iam::\d{12}:(role|user|group)/[\w+=,.@/-]+", arn):
                raise ValueError(f"not an IAM role, user or group ARN: {arn!r}")
        return arns


class BudgetingConfig(_Config):
    """How budgets forecast and spot anomalies."""

    # A job tag declaring the run's expected length in hours (forecasts of total budgets).
    expected_duration_tag: str = "expected-duration-hours"
    # Unused (docs/forecast.md: the forecast's assumption was chosen by a backtest): kept
    # for old context.
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


_ROLE_NAME = r"^[\w+=,.@-]{1,64}$"


class AccountsConfig(_Config):
    """Many accounts: the organisation whose accounts may send events to the tracker's
    bus, and the read-only role the tracker assumes in each member account."""

    # Organizations id (o-...): the bus accepts PutEvents from its accounts.
    organization_id: str | None = Field(default=None, pattern=r"^o-[a-z0-9]{10,32}$")
    # The role the member stack creates and the tracker assumes for Describe calls.
    member_role_name: str = Field(default="costtracker-member-read", pattern=r"^[\w+=,.@-]{1,64}$")
    # The tracker's one role (fixed name, deployed first) that the member role trusts
    # exactly; the functions reach member accounts through it.
    tracker_role_name: str = Field(default="costtracker-tracker", pattern=_ROLE_NAME)
    # Accounts admitted where Organizations is not used (or besides it).
    allowed_accounts: tuple[str, ...] = ()
    # ListAccounts through this role in the management account (None: with the
    # tracker's own role, which works in the management or a delegated admin account).
    organizations_role_name: str | None = Field(default=None, pattern=_ROLE_NAME)
    management_account: str | None = Field(default=None, pattern=r"^\d{12}$")
    # Team tag value -> the only accounts whose instances may carry it (optional).
    team_accounts: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    # The regions the sweeps read in every account (empty: the tracker's own).
    regions: tuple[str, ...] = ()
    # An unknown account triggers at most one ListAccounts per this many minutes.
    refresh_minutes: int = Field(default=5, ge=1, le=1440)
    # DescribeInstances MaxResults of one sweep unit (AWS allows 5-1000).
    sweep_page_size: int = Field(default=1000, ge=5, le=1000)

    @field_validator("allowed_accounts")
    @classmethod
    def _accounts(cls, accounts: tuple[str, ...]) -> tuple[str, ...]:
        for account in accounts:
            if not re.fullmatch(r"\d{12}", account):
                raise ValueError(f"accounts.allowed_accounts: {account!r} is not a 12-digit id")
        return accounts

    @field_validator("team_accounts")
    @classmethod
    def _team_accounts(cls, teams: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        for team, accounts in teams.items():
            bad = [a for a in accounts if not re.fullmatch(r"\d{12}", a)]
            if bad or not accounts:
                raise ValueError(f"accounts.team_accounts.{team}: one or more 12-digit ids")
        return teams

    @property
    def many_accounts(self) -> bool:
        """Events from other accounts are admitted (and checked): an organisation or an
        allow-list is configured."""
        return bool(self.organization_id or self.allowed_accounts)


class ReservationConfig(_Config):
    """Capacity Blocks and ODCRs: the fees (AWS gives no price for a block) and when a
    reservation counts as underused."""

    # Upfront fee (USD) of a Capacity Block, by reservation id (cr-...).
    fees: dict[str, Decimal] = Field(default_factory=dict)
    # Else the block's effective $/instance-hour by instance type (x count x block hours).
    block_hourly: dict[str, Decimal] = Field(default_factory=dict)
    # An admin alert when a reservation's use over a UTC day is below this fraction.
    underused_below: Decimal = Field(default=Decimal("0.2"), ge=0, le=1)


class FsxConfig(_Config):
    """FSx for Lustre file systems (cost rule 13): those without a job tag can be given a
    job here, by file system id."""

    file_systems: dict[str, str] = Field(default_factory=dict)

    @field_validator("file_systems")
    @classmethod
    def _ids(cls, file_systems: dict[str, str]) -> dict[str, str]:
        for fs_id, job in file_systems.items():
            if not re.fullmatch(r"fs-[0-9a-f]{8,17}", fs_id):
                raise ValueError(f"fsx.file_systems: {fs_id!r} is not a file system id (fs-...)")
            if not job:
                raise ValueError(f"fsx.file_systems.{fs_id}: name the job")
        return file_systems


class LedgerConfig(_Config):
    """What the functions need to know beyond resource names."""

    # The finance day's time zone (IANA name): days, day and month budgets, the daily
    # summary and FOCUS export follow its calendar (``shared.domain.finance_day``).
    finance_timezone: str = "UTC"
    fsx: FsxConfig = Field(default_factory=FsxConfig)

    tracking: TrackingConfig = Field(default_factory=TrackingConfig)
    checkpoint: CheckpointConfig = Field(default_factory=CheckpointConfig)
    utilization: UtilizationConfig = Field(default_factory=UtilizationConfig)
    measurement: MeasurementConfig = Field(default_factory=MeasurementConfig)
    auto_stop: AutoStopConfig = Field(default_factory=AutoStopConfig)
    budgeting: BudgetingConfig = Field(default_factory=BudgetingConfig)
    budget_actions: BudgetActionsConfig = Field(default_factory=BudgetActionsConfig)
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

    @field_validator("finance_timezone")
    @classmethod
    def _zone(cls, zone: str) -> str:
        return check_zone(zone)

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
    def _scp_needs_an_organisation(self) -> LedgerConfig:
        if self.budget_actions.deny_with == "scp" and not self.accounts.organization_id:
            raise ValueError("budget_actions.deny_with 'scp' needs accounts.organization_id")
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
