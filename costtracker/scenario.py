"""The replay scenario (docs/cost-rules.md "The replay interface"), validated with clear errors."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator, model_validator

from shared.config.ledger import PriceOverrides

# Sane bounds for a scenario's prices (USD): the dearest EC2 instance lists at about
# $410/h, the dearest EBS or S3 storage class at well under $1/GB-month.
MAX_HOURLY_USD = Decimal(1000)
MAX_GB_MONTH_USD = Decimal(10)


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow")


class VolumeSpec(_Model):
    volume_id: str = ""
    size_gib: int = Field(ge=1, le=65536)
    volume_type: str = Field(default="gp3", min_length=1, max_length=32)
    iops: int | None = Field(default=None, ge=0, le=1_000_000)
    throughput: int | None = Field(default=None, ge=0, le=100_000)  # MB/s


class InstanceSpec(_Model):
    instance_id: str = Field(pattern=r"^i-[0-9a-f]{8,17}$")
    instance_type: str
    lifecycle: Literal["on-demand", "spot", "capacity-block"] = "on-demand"
    platform: str = "Linux/UNIX"
    availability_zone: str = ""
    tags: dict[str, str] = Field(default_factory=dict)
    volumes: list[VolumeSpec] = Field(default_factory=list)
    account: str | None = Field(default=None, pattern=r"^\d{12}$")
    region: str | None = None
    # The reservation it was launched into (an ODCR, or a Capacity Block with lifecycle
    # capacity-block).
    capacity_reservation_id: str | None = Field(default=None, pattern=r"^cr-[0-9a-zA-Z]{8,17}$")

    @model_validator(mode="after")
    def _block_has_reservation(self) -> InstanceSpec:
        if self.lifecycle == "capacity-block" and not self.capacity_reservation_id:
            raise ValueError(
                f"{self.instance_id}: lifecycle capacity-block needs capacity_reservation_id"
            )
        return self


class TrainingJobSpec(_Model):
    """What DescribeTrainingJob answers once the job has ended (replay key ``training_jobs``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")
    instance_type: str = Field(pattern=r"^ml\.[a-z0-9-]+\.[a-z0-9-]+$")
    instance_count: int = Field(ge=1, le=10_000)
    volume_gb: int = Field(default=0, ge=0, le=16_384)
    training_seconds: int = Field(ge=0)
    # Default: the training seconds (a job without managed spot bills all of them).
    billable_seconds: int | None = Field(default=None, ge=0)
    warm_pool_seconds: int = Field(default=0, ge=0)
    spot: bool = False
    tags: dict[str, str] = Field(default_factory=dict)
    # Its CheckpointConfig.S3Uri (where it writes checkpoints), if any.
    checkpoint_uri: str = Field(
        default="", pattern=r"^(s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/.*)?)?$"
    )
    # Where the job runs (default: the scenario's): that account's API answers for it.
    account: str | None = Field(default=None, pattern=r"^\d{12}$")
    region: str | None = None

    @model_validator(mode="after")
    def _billable(self) -> TrainingJobSpec:
        if self.billable_seconds is None:
            if self.spot:
                raise ValueError(f"training job {self.name}: a spot job needs billable_seconds")
        elif self.spot and self.billable_seconds > self.training_seconds:
            raise ValueError(
                f"training job {self.name}: billable_seconds ({self.billable_seconds}) exceed "
                f"training_seconds ({self.training_seconds}) for a managed-spot job"
            )
        return self

    @property
    def billed_seconds(self) -> int:
        """BillableTimeInSeconds: as given, else the training seconds."""
        return self.training_seconds if self.billable_seconds is None else self.billable_seconds


class CapacityReservationSpec(_Model):
    """A Capacity Block or ODCR as DescribeCapacityReservations describes it, with its upfront
    fee (replay key ``capacity_reservations``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    reservation_id: str = Field(pattern=r"^cr-[0-9a-zA-Z]{8,17}$")
    kind: Literal["capacity-block", "odcr"]
    instance_type: str = Field(min_length=1)
    instance_count: int = Field(ge=1, le=10_000)
    start: AwareDatetime
    end: AwareDatetime | None = None
    # Capacity Blocks only; absent: the fee is unknown and the block's cost is unpriced.
    upfront_fee_usd: Decimal | None = Field(default=None, ge=0)
    tags: dict[str, str] = Field(default_factory=dict)
    # Where it is reserved (default: the scenario's): that account's API answers for it.
    account: str | None = Field(default=None, pattern=r"^\d{12}$")
    region: str | None = None

    @model_validator(mode="after")
    def _window(self) -> CapacityReservationSpec:
        rid = self.reservation_id
        if self.end is not None and self.end <= self.start:
            raise ValueError(f"capacity reservation {rid}: end must be after start")
        if self.kind == "capacity-block":
            if self.end is None:
                raise ValueError(f"capacity reservation {rid}: a capacity-block needs an end")
            if self.end - self.start > timedelta(days=182):
                raise ValueError(
                    f"capacity reservation {rid}: a capacity-block lasts 182 days at most"
                )
        elif self.upfront_fee_usd is not None:
            raise ValueError(
                f"capacity reservation {rid}: upfront_fee_usd is for a capacity-block; an odcr "
                "bills at the on-demand rate"
            )
        return self


class MetricPoint(_Model):
    """A datapoint: its time and its value in percent (as CloudWatch holds it)."""

    t: AwareDatetime
    v: Decimal = Field(ge=0, le=1000)


class MetricSeriesSpec(_Model):
    """Datapoints of an instance's configured accelerator metric (instance-level) that
    the emulator's CloudWatch holds (cost rule 10)."""

    instance_id: str = Field(pattern=r"^i-[0-9a-f]{8,17}$")
    period: Literal[60, 300] = 300
    points: list[MetricPoint] = Field(default_factory=list, max_length=100_000)


class FileSystemChangeSpec(_Model):
    model_config = ConfigDict(frozen=True, extra="forbid")

    at: AwareDatetime
    storage_gib: int | None = Field(default=None, ge=0, le=10_000_000)
    throughput_mb_s_per_tib: int | None = Field(default=None, ge=1, le=100_000)


class FileSystemSpec(_Model):
    """An FSx for Lustre file system as DescribeFileSystems describes it (replay key
    ``file_systems``); ``created``, ``deleted`` and ``changes`` are used only where no
    CloudTrail event in ``events`` says so."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    file_system_id: str = Field(pattern=r"^fs-[0-9a-f]{8,17}$")
    deployment_type: str = Field(min_length=1, max_length=64)
    storage_gib: int = Field(ge=0, le=10_000_000)
    throughput_mb_s_per_tib: int | None = Field(default=None, ge=1, le=100_000)
    storage_type: str = "SSD"
    drive_cache_type: str | None = None
    tags: dict[str, str] = Field(default_factory=dict)
    created: AwareDatetime
    deleted: AwareDatetime | None = None
    changes: list[FileSystemChangeSpec] = Field(default_factory=list)
    account: str | None = Field(default=None, pattern=r"^\d{12}$")
    region: str | None = None

    @model_validator(mode="after")
    def _times(self) -> FileSystemSpec:
        if self.deleted is not None and self.deleted <= self.created:
            raise ValueError(f"file system {self.file_system_id}: deleted must be after created")
        return self


class ApiCallSpec(_Model):
    """A call through the API handler at ``at``, as finance, an admin or a team member."""

    at: AwareDatetime
    as_: str = Field(alias="as", pattern=r"^(finance|admin|team:[A-Za-z0-9._-]{1,64})$")
    method: Literal["GET", "PUT", "POST", "DELETE"]
    path: str = Field(pattern=r"^/[\x21-\x7e]{0,1023}$")
    body: dict[str, Any] | None = None


class Scenario(_Model):
    region: str = "us-east-1"
    account: str = "123456789012"
    prices: PriceOverrides | None = None
    checkpoint: dict[str, Any] | None = None
    utilization: dict[str, Any] | None = None
    discounts: dict[str, Decimal] | None = None
    instances: list[InstanceSpec] = Field(default_factory=list)
    budgets: list[dict[str, Any]] = Field(default_factory=list)
    # Events stay raw: a malformed one must reach the handler and be reported there.
    events: list[Any] = Field(default_factory=list)
    until: AwareDatetime | None = None
    training_jobs: list[TrainingJobSpec] = Field(default_factory=list)
    capacity_reservations: list[CapacityReservationSpec] = Field(default_factory=list)
    metrics: list[MetricSeriesSpec] = Field(default_factory=list)
    file_systems: list[FileSystemSpec] = Field(default_factory=list)
    # The finance day's IANA time zone (cost rule 12); absent: the configured one (UTC).
    finance_timezone: str | None = None
    # Calls made through the API handler at a simulated time (e.g. releasing an action).
    api_calls: list[ApiCallSpec] = Field(default_factory=list, max_length=1000)

    @field_validator("finance_timezone")
    @classmethod
    def _zone(cls, zone: str | None) -> str | None:
        from shared.config.zones import check_zone

        return None if zone is None else check_zone(zone)

    @model_validator(mode="after")
    def _unique_managed(self) -> Scenario:
        for what, ids in (
            (
                "training_jobs: name (per account and region)",
                [
                    f"{j.name} in {j.account or self.account}/{j.region or self.region}"
                    for j in self.training_jobs
                ],
            ),
            (
                "capacity_reservations: reservation_id",
                [r.reservation_id for r in self.capacity_reservations],
            ),
            ("file_systems: file_system_id", [f.file_system_id for f in self.file_systems]),
        ):
            dupes = sorted({i for i in ids if ids.count(i) > 1})
            if dupes:
                raise ValueError(f"{what} values must be unique, repeated: {', '.join(dupes)}")
        return self

    @field_validator("region")
    @classmethod
    def _known_region(cls, region: str) -> str:
        known = known_regions()
        if known and region not in known:
            raise ValueError(
                f"not an AWS region the emulator knows (e.g. us-east-1, eu-west-1; "
                f"{len(known)} known)"
            )
        return region

    @field_validator("prices", mode="before")
    @classmethod
    def _sane_prices(cls, prices: Any) -> Any:
        """Every price a positive, finite number within a sane bound, checked at load (a
        price of 1e30 would overflow the ledger's arithmetic at the end of the replay)."""
        if not isinstance(prices, dict):
            return prices
        for kind, bound in (
            ("ec2", MAX_HOURLY_USD),
            ("spot", MAX_HOURLY_USD),
            ("ebs_gb_month", MAX_GB_MONTH_USD),
            ("fsx_gb_month", MAX_GB_MONTH_USD),
        ):
            table = prices.get(kind)
            if isinstance(table, dict):
                for key, value in table.items():
                    if kind == "spot" and isinstance(value, list):  # a price history
                        for n, entry in enumerate(value):
                            _check_spot_entry(f"spot.{key}[{n}]", entry)
                        continue
                    _check_price(f"{kind}.{key}", value, bound)
        if prices.get("s3_gb_month") is not None:
            _check_price("s3_gb_month", prices["s3_gb_month"], MAX_GB_MONTH_USD)
        regions = prices.get("regions")
        if isinstance(regions, dict):  # each region's prices, the same bounds
            for own in regions.values():
                cls._sane_prices(own)
        return prices

    def event_times(self) -> list[datetime]:
        """The events' times that the handlers can accept: one outside the years an event
        can carry is rejected there, and must not stretch the replay's schedule."""
        from shared.domain.clock import utc
        from shared.events.envelope import in_event_years

        times = []
        for event in self.events:
            try:
                at = utc(datetime.fromisoformat(str(event["time"]).replace("Z", "+00:00")))
            except (KeyError, TypeError, ValueError, OverflowError):
                continue
            if in_event_years(at):
                times.append(at)
        return times


def _check_spot_entry(where: str, entry: Any) -> None:
    """One step of a spot price history: ``{"from": ISO time, "usd": price}``."""
    if not isinstance(entry, dict) or set(entry) != {"from", "usd"}:
        raise ValueError(f'{where}: give a history step as {{"from": TIME, "usd": PRICE}}')
    try:
        datetime.fromisoformat(str(entry["from"]).replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValueError(f"{where}.from: not an ISO 8601 time") from exc
    _check_price(f"{where}.usd", entry["usd"], MAX_HOURLY_USD)


def _check_price(where: str, value: Any, bound: Decimal) -> None:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f"{where}: give a price as a number or a decimal string")
    try:
        price = Decimal(str(value))
    except ArithmeticError as exc:  # decimal.InvalidOperation
        raise ValueError(f"{where}: not a number") from exc
    if not price.is_finite() or not 0 < price <= bound:
        raise ValueError(f"{where}: a price must be positive and at most {bound} USD")


@cache
def known_regions() -> frozenset[str]:
    """Every region of the AWS partitions botocore knows (empty if it cannot say)."""
    try:
        import botocore.session

        session = botocore.session.get_session()
        regions: set[str] = set()
        for partition in session.get_available_partitions():
            regions.update(session.get_available_regions("ec2", partition))
        return frozenset(regions)
    except Exception:  # an unknown botocore layout: the emulator will say
        return frozenset()


def load_scenario(path: str | Path) -> Scenario:
    return Scenario.model_validate(json.loads(Path(path).read_text()))


def read_scenario(path: str | Path) -> Scenario:
    """The scenario at ``path``, or a one-line ``CliError`` naming the problem."""
    from pydantic import ValidationError

    from costtracker.errors import CliError, validation_summary

    try:
        text = Path(path).read_bytes().decode("utf-8")
    except FileNotFoundError as exc:
        raise CliError(f"{path}: no such file; give the path of a scenario JSON file") from exc
    except IsADirectoryError as exc:
        raise CliError(f"{path}: is a directory; give a scenario JSON file") from exc
    except OSError as exc:
        raise CliError(f"{path}: cannot read it ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise CliError(f"{path}: not a text file; a scenario is UTF-8 JSON") from exc
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from exc
    except RecursionError as exc:
        raise CliError(f"{path}: JSON nested too deeply to be a scenario") from exc
    if not isinstance(raw, dict):
        raise CliError(f'{path}: a scenario is a JSON object ({{"events": [...], ...}})')
    try:
        return Scenario.model_validate(raw)
    except ValidationError as exc:
        raise CliError(validation_summary(exc, f"{path}: ")) from exc
