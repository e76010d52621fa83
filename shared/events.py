"""Pydantic models of the AWS events we consume, parsed at the handler's edge.

AWS's hyphenated keys (``instance-id``, ``detail-type``) are aliased; unknown
states and missing ids fail validation, so a malformed event is rejected
loudly instead of being half-applied.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from shared.domain.lifecycle import InstanceStateName

INSTANCE_ID_PATTERN = r"^i-[0-9a-f]{8,17}$"
SEQUENCER_PATTERN = r"^[0-9A-Fa-f]{0,64}$"


class _Detail(BaseModel):
    model_config = ConfigDict(populate_by_name=False, frozen=True, defer_build=True)


class AwsEvent(BaseModel):
    """EventBridge envelope: the fields (and the Scheduler's ``"{}"`` detail) of Powertools'
    ``EventBridgeModel``, whose package would cost each handler's cold start its parser
    (see ``shared.config._Config``); ``version`` defaults to "0" (AWS doc samples omit it)."""

    model_config = ConfigDict(populate_by_name=False, frozen=True, defer_build=True)

    version: str = "0"
    id: str
    source: str
    account: str
    time: AwareDatetime
    region: str
    resources: list[str] = Field(default_factory=list)
    detail_type: str = Field(alias="detail-type")
    detail: dict[str, Any] | BaseModel
    replay_name: str | None = Field(default=None, alias="replay-name")

    @field_validator("time")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        return to_utc(value)

    @field_validator("detail", mode="before")
    @classmethod
    def _scheduler_detail(cls, value: object, info: ValidationInfo) -> object:
        """EventBridge Scheduler sends ``"{}"`` as the detail of an empty payload."""
        return {} if info.data.get("source") == "aws.scheduler" and value == "{}" else value


class InstanceStateDetail(_Detail):
    instance_id: str = Field(alias="instance-id", pattern=INSTANCE_ID_PATTERN)
    state: InstanceStateName


class InstanceStateChangeEvent(AwsEvent):
    source: Literal["aws.ec2"]
    detail_type: Literal["EC2 Instance State-change Notification"] = Field(alias="detail-type")
    detail: InstanceStateDetail


class SpotInterruptionDetail(_Detail):
    instance_id: str = Field(alias="instance-id", pattern=INSTANCE_ID_PATTERN)
    instance_action: Literal["terminate", "stop", "hibernate"] = Field(alias="instance-action")


class SpotInterruptionEvent(AwsEvent):
    source: Literal["aws.ec2"]
    detail_type: Literal["EC2 Spot Instance Interruption Warning"] = Field(alias="detail-type")
    detail: SpotInterruptionDetail


class RebalanceDetail(_Detail):
    instance_id: str = Field(alias="instance-id", pattern=INSTANCE_ID_PATTERN)


class RebalanceRecommendationEvent(AwsEvent):
    source: Literal["aws.ec2"]
    detail_type: Literal["EC2 Instance Rebalance Recommendation"] = Field(alias="detail-type")
    detail: RebalanceDetail


class S3Bucket(_Detail):
    name: str = Field(min_length=3, max_length=63)


class S3CreatedObject(_Detail):
    key: str = Field(min_length=1, max_length=4096)
    size: int = Field(ge=0, le=5 * 1024**4)  # S3's largest object: 5 TiB
    sequencer: str = Field(default="", pattern=SEQUENCER_PATTERN)


class S3DeletedObject(_Detail):
    key: str = Field(min_length=1, max_length=4096)
    sequencer: str = Field(default="", pattern=SEQUENCER_PATTERN)


class ObjectCreatedDetail(_Detail):
    bucket: S3Bucket
    object: S3CreatedObject


class ObjectDeletedDetail(_Detail):
    bucket: S3Bucket
    object: S3DeletedObject


class ObjectCreatedEvent(AwsEvent):
    source: Literal["aws.s3"]
    detail_type: Literal["Object Created"] = Field(alias="detail-type")
    detail: ObjectCreatedDetail


class ObjectDeletedEvent(AwsEvent):
    source: Literal["aws.s3"]
    detail_type: Literal["Object Deleted"] = Field(alias="detail-type")
    detail: ObjectDeletedDetail


class MetricId(_Detail):
    namespace: str
    name: str
    dimensions: dict[str, str] = Field(default_factory=dict)


class MetricStat(_Detail):
    metric: MetricId


class AlarmMetric(_Detail):
    id: str = ""
    metric_stat: MetricStat | None = Field(default=None, alias="metricStat")


class AlarmConfiguration(_Detail):
    metrics: list[AlarmMetric] = Field(default_factory=list)


class AlarmState(_Detail):
    value: Literal["OK", "ALARM", "INSUFFICIENT_DATA"]
    timestamp: AwareDatetime

    @field_validator("timestamp", mode="before")
    @classmethod
    def _cloudwatch_offset(cls, value: object) -> object:
        """CloudWatch writes "+0000"; ISO 8601 parsers want "+00:00"."""
        if isinstance(value, str) and re.search(r"[+-]\d{4}$", value):
            return f"{value[:-2]}:{value[-2:]}"
        return value

    @field_validator("timestamp")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        return to_utc(value)


class AlarmStateDetail(_Detail):
    alarm_name: str = Field(alias="alarmName", min_length=1, max_length=255)
    configuration: AlarmConfiguration = Field(default_factory=AlarmConfiguration)
    state: AlarmState


class AlarmStateChangeEvent(AwsEvent):
    source: Literal["aws.cloudwatch"]
    detail_type: Literal["CloudWatch Alarm State Change"] = Field(alias="detail-type")
    detail: AlarmStateDetail

    def single_metric(self) -> MetricId | None:
        """The alarm's metric when it watches exactly one (metric math and composite
        alarms are not ours)."""
        stats = [m.metric_stat for m in self.detail.configuration.metrics if m.metric_stat]
        return stats[0].metric if len(self.detail.configuration.metrics) == 1 and stats else None


class ScheduledEvent(AwsEvent):
    """An EventBridge schedule tick; ``time`` is the moment the work is due."""

    source: Literal["aws.events", "aws.scheduler"]
    detail_type: Literal["Scheduled Event"] = Field(alias="detail-type")
    detail: dict[str, object] = Field(default_factory=dict)


def to_utc(value: datetime) -> datetime:
    """In UTC, or a validation error for a time UTC cannot hold (year 1 or 9999 offsets)."""
    try:
        return value.astimezone(UTC)
    except OverflowError as exc:
        raise ValueError("time out of range once converted to UTC") from exc


def event_id_of(raw: object) -> str:
    """The event id for logs, even when the rest of the event is unreadable; characters a
    UTF-8 log cannot carry (lone surrogates) are escaped so the log line is not lost."""
    if isinstance(raw, dict):
        value = raw.get("id")
        if isinstance(value, str):
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
    return "<no id>"
