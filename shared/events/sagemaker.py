"""Pydantic models of the managed-training and reserved-capacity events (docs/cost-rules.md "Event
sources").

Kept beside ``shared.events.aws`` (same envelope, same conventions) so that module stays as it is.

Traps of the real events, from the AWS sample in tests/events/:
- times inside ``detail`` are epoch MILLISECONDS, as strings or numbers;
- ``Tags`` is a map, not a list of Key/Value pairs;
- ``InstanceType`` in the documented sample is the placeholder "InstanceType". We ACCEPT any
  non-empty instance type (an event is never dropped: its time still counts) and say whether
  it looks like a SageMaker type (``ml.<family>.<size>``); an unknown type finds no price and
  is reported ``unpriced``, as an unknown EC2 type is;
- the event carries no billable seconds: those come from DescribeTrainingJob at the end.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any, ClassVar, Literal, NoReturn

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    field_validator,
    model_validator,
)

from shared.domain.managed.models import (
    MAX_KEEP_ALIVE_SECONDS,
    MAX_PENDING_SECONDS,
    MAX_TRAINING_INSTANCES,
    MAX_TRAINING_SECONDS,
    MAX_VOLUME_SIZE_GB,
    TERMINAL_TRAINING_STATUSES,
    TrainingJobDescription,
    TrainingJobStatus,
)
from shared.events.envelope import AwsEvent, to_utc

ML_INSTANCE_TYPE = re.compile(r"^ml\.[a-z0-9-]+\.[a-z0-9-]+$")
TRAINING_JOB_NAME = r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# Epoch milliseconds this large are past year 9999: a unit mistake, not a time.
_MAX_MS = 253_402_300_799_999


def epoch_millis(value: object) -> datetime:
    """An epoch-milliseconds time (string or number, as SageMaker events carry them) in UTC;
    an ISO 8601 time with a zone is accepted too."""
    if isinstance(value, datetime):
        return to_utc(value) if value.tzinfo else _naive(value)
    if isinstance(value, bool) or value is None:
        raise ValueError(f"expected epoch milliseconds, got {value!r}")
    if isinstance(value, int | float | Decimal):
        millis = Decimal(str(value))
    elif isinstance(value, str) and re.fullmatch(r"\s*\d+(\.\d+)?\s*", value):
        millis = Decimal(value.strip())
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"expected epoch milliseconds or ISO 8601, got {value!r}") from None
        return to_utc(parsed) if parsed.tzinfo else _naive(parsed)
    else:
        raise ValueError(f"expected epoch milliseconds, got {type(value).__name__}")
    try:
        if not millis.is_finite() or millis < 0 or millis > _MAX_MS:
            raise ValueError(f"epoch milliseconds out of range: {value!r}")
    except InvalidOperation:
        raise ValueError(f"epoch milliseconds out of range: {value!r}") from None
    return to_utc(_EPOCH + timedelta(milliseconds=int(millis)))  # the years events carry


def _naive(value: datetime) -> NoReturn:
    raise ValueError(f"naive time {value.isoformat()}: a zone is required")


EpochMillis = Annotated[datetime, BeforeValidator(epoch_millis)]


def _tag_map(value: object) -> object:
    """``Tags`` is a map in the events; accept the API's Key/Value list too."""
    if isinstance(value, list):
        out: dict[str, object] = {}
        for item in value:
            if not (isinstance(item, dict) and "Key" in item):
                raise ValueError("Tags as a list must hold {Key, Value} objects")
            out[str(item["Key"])] = item.get("Value", "")
        return out
    return {} if value is None else value


class _Detail(BaseModel):
    model_config = ConfigDict(populate_by_name=False, frozen=True, defer_build=True)


class InstanceGroup(_Detail):
    """A heterogeneous cluster's group (``ResourceConfig.InstanceGroups``)."""

    instance_type: str = Field(alias="InstanceType", min_length=1, max_length=64)
    instance_count: int = Field(alias="InstanceCount", ge=0, le=MAX_TRAINING_INSTANCES)
    instance_group_name: str = Field(default="", alias="InstanceGroupName")


class ResourceConfig(_Detail):
    instance_type: str | None = Field(
        default=None, alias="InstanceType", min_length=1, max_length=64
    )
    instance_count: int | None = Field(
        default=None, alias="InstanceCount", ge=1, le=MAX_TRAINING_INSTANCES
    )
    volume_size_gb: int = Field(default=0, alias="VolumeSizeInGB", ge=0, le=MAX_VOLUME_SIZE_GB)
    keep_alive_period_seconds: int | None = Field(
        default=None, alias="KeepAlivePeriodInSeconds", ge=0, le=MAX_KEEP_ALIVE_SECONDS
    )
    instance_groups: tuple[InstanceGroup, ...] = Field(default=(), alias="InstanceGroups")

    @model_validator(mode="after")
    def _some_instances(self) -> ResourceConfig:
        if self.instance_type is None and not self.instance_groups:
            raise ValueError("ResourceConfig names neither InstanceType nor InstanceGroups")
        if self.instance_type is not None and self.instance_count is None:
            raise ValueError("ResourceConfig.InstanceCount is required with InstanceType")
        return self

    def groups(self) -> tuple[tuple[str, int], ...]:
        """(instance type, count) of every group of the cluster."""
        if self.instance_type is not None and self.instance_count is not None:
            return ((self.instance_type, self.instance_count),)
        return tuple((g.instance_type, g.instance_count) for g in self.instance_groups)

    @property
    def well_formed_instance_type(self) -> bool:
        """Whether every type looks like a SageMaker one (``ml.trn1.32xlarge``); the AWS doc
        sample's placeholder "InstanceType" does not, and will find no price."""
        return all(ML_INSTANCE_TYPE.match(t) for t, _ in self.groups())


class StoppingCondition(_Detail):
    max_runtime_seconds: int | None = Field(
        default=None, alias="MaxRuntimeInSeconds", ge=0, le=MAX_TRAINING_SECONDS
    )
    max_wait_seconds: int | None = Field(
        default=None, alias="MaxWaitTimeInSeconds", ge=0, le=MAX_TRAINING_SECONDS
    )
    max_pending_seconds: int | None = Field(
        default=None, alias="MaxPendingTimeInSeconds", ge=0, le=MAX_PENDING_SECONDS
    )


class TrainingJobStateDetail(_Detail):
    training_job_name: str = Field(alias="TrainingJobName", pattern=TRAINING_JOB_NAME)
    training_job_arn: str = Field(alias="TrainingJobArn", min_length=1)
    training_job_status: TrainingJobStatus = Field(alias="TrainingJobStatus")
    secondary_status: str = Field(default="", alias="SecondaryStatus")
    resource_config: ResourceConfig = Field(alias="ResourceConfig")
    stopping_condition: StoppingCondition = Field(
        default_factory=StoppingCondition, alias="StoppingCondition"
    )
    enable_managed_spot_training: bool = Field(default=False, alias="EnableManagedSpotTraining")
    creation_time: EpochMillis | None = Field(default=None, alias="CreationTime")
    training_start_time: EpochMillis | None = Field(default=None, alias="TrainingStartTime")
    training_end_time: EpochMillis | None = Field(default=None, alias="TrainingEndTime")
    last_modified_time: EpochMillis | None = Field(default=None, alias="LastModifiedTime")
    tags: Annotated[dict[str, str], BeforeValidator(_tag_map)] = Field(
        default_factory=dict, alias="Tags"
    )
    failure_reason: str = Field(default="", alias="FailureReason")

    @field_validator("training_job_arn")
    @classmethod
    def _arn(cls, value: str) -> str:
        if not value.startswith("arn:") or ":training-job/" not in value:
            raise ValueError(f"not a training job ARN: {value!r}")
        return value


class TrainingJobStateChangeEvent(AwsEvent):
    source: Literal["aws.sagemaker"]
    detail_type: Literal["SageMaker Training Job State Change"] = Field(alias="detail-type")
    detail: TrainingJobStateDetail

    @property
    def terminal(self) -> bool:
        return self.detail.training_job_status in TERMINAL_TRAINING_STATUSES

    def description(self) -> TrainingJobDescription:
        """What the event alone says, in the shape DescribeTrainingJob fills in at the end
        (no billable seconds yet). A heterogeneous cluster is described by its first group:
        wire one description per group if such clusters matter."""
        d = self.detail
        instance_type, count = d.resource_config.groups()[0]
        return TrainingJobDescription(
            name=d.training_job_name,
            status=d.training_job_status,
            instance_type=instance_type,
            instance_count=max(count, 1),
            volume_size_gb=d.resource_config.volume_size_gb,
            training_start=d.training_start_time,
            training_end=d.training_end_time,
            managed_spot=d.enable_managed_spot_training,
            tags=dict(d.tags),
            region=self.region,
            account=self.account,
        )


class CapacityBlockDetail(_Detail):
    capacity_reservation_id: str = Field(alias="capacity-reservation-id", pattern=r"^cr-\w{8,17}$")
    end_date: datetime | None = Field(default=None, alias="end-date")

    @field_validator("end_date")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("end-date needs a zone")
        return None if value is None else to_utc(value)


class _CapacityBlockEvent(AwsEvent):
    source: Literal["aws.ec2"]
    detail: CapacityBlockDetail


class CapacityBlockDeliveredEvent(_CapacityBlockEvent):
    """The block started."""

    detail_type: Literal["Capacity Block Delivered", "Capacity Block Reservation Delivered"] = (
        Field(alias="detail-type")
    )
    kind: ClassVar[Literal["delivered"]] = "delivered"


class CapacityBlockExpirationWarningEvent(_CapacityBlockEvent):
    """40 minutes before the block's end."""

    detail_type: Literal[
        "Capacity Block Expiration Warning", "Capacity Block Reservation Expiration Warning"
    ] = Field(alias="detail-type")
    kind: ClassVar[Literal["expiration_warning"]] = "expiration_warning"


# ``Capacity Block Delivered`` and ``Capacity Block Expiration Warning``. The user guide's
# samples write "Capacity Block Reservation ..." in places; both spellings are accepted.
# Noted on the reservation; they carry no money. Validated on first use.
CapacityBlockEvent = CapacityBlockDeliveredEvent | CapacityBlockExpirationWarningEvent
CAPACITY_BLOCK_EVENT: TypeAdapter[CapacityBlockEvent] = TypeAdapter(
    Annotated[CapacityBlockEvent, Field(discriminator="detail_type")],
    config=ConfigDict(defer_build=True),
)


def parse_sagemaker_event(raw: Any) -> TrainingJobStateChangeEvent:
    """The event, or a ``pydantic.ValidationError`` naming the bad field."""
    return TrainingJobStateChangeEvent.model_validate(raw)
