"""Pydantic models of the AWS events we consume, parsed at the handler's edge.

AWS's hyphenated keys (``instance-id``, ``detail-type``) are aliased; unknown
states and missing ids fail validation, so a malformed event is rejected
loudly instead of being half-applied.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import AwareDatetime, ConfigDict, Field, TypeAdapter, field_validator

from shared.domain.alarm_record import AlarmIdentity, parse_alarm_arn, threshold_of
from shared.domain.idle import WatchedMetric
from shared.domain.lifecycle import InstanceStateName
from shared.events.envelope import INSTANCE_ID_PATTERN as INSTANCE_ID_PATTERN
from shared.events.envelope import SEQUENCER_PATTERN as SEQUENCER_PATTERN
from shared.events.envelope import AwsEvent as AwsEvent
from shared.events.envelope import ScheduledEvent as ScheduledEvent
from shared.events.envelope import _Detail
from shared.events.envelope import event_id_of as event_id_of
from shared.events.envelope import to_utc as to_utc

_DEFERRED = ConfigDict(defer_build=True)  # a union's validator is built on first use


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


# What the spot function takes: an interruption warning or a rebalance recommendation, told
# apart by ``detail-type`` (validated on first use: nothing is built at import).
SpotNotice = SpotInterruptionEvent | RebalanceRecommendationEvent
SPOT_NOTICE: TypeAdapter[SpotNotice] = TypeAdapter(
    Annotated[SpotNotice, Field(discriminator="detail_type")], config=_DEFERRED
)


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


# What the checkpoint function takes: Object Created or Object Deleted.
ObjectEvent = ObjectCreatedEvent | ObjectDeletedEvent
OBJECT_EVENT: TypeAdapter[ObjectEvent] = TypeAdapter(
    Annotated[ObjectEvent, Field(discriminator="detail_type")], config=_DEFERRED
)


class MetricId(_Detail):
    namespace: str
    name: str
    dimensions: dict[str, str] = Field(default_factory=dict)


class MetricStat(_Detail):
    metric: MetricId
    period: int | None = None
    stat: str | None = None


class AlarmMetric(_Detail):
    id: str = ""
    metric_stat: MetricStat | None = Field(default=None, alias="metricStat")


class AlarmConfiguration(_Detail):
    metrics: list[AlarmMetric] = Field(default_factory=list)


class AlarmState(_Detail):
    value: Literal["OK", "ALARM", "INSUFFICIENT_DATA"]
    timestamp: AwareDatetime
    # CloudWatch's JSON string of the evaluation (its ``threshold`` among others).
    reason_data: str = Field(default="", alias="reasonData", max_length=16_384)

    def threshold(self) -> Decimal | None:
        """The threshold the alarm was evaluated against, as ``reasonData`` says it."""
        try:
            data = json.loads(self.reason_data) if self.reason_data else None
        except ValueError:
            return None
        return threshold_of(data.get("threshold")) if isinstance(data, dict) else None

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

    def watched(self) -> WatchedMetric | None:
        """The metric the alarm watches when it watches exactly one (metric math, anomaly
        detection and composite alarms are never the tracker's)."""
        metrics = self.detail.configuration.metrics
        if len(metrics) != 1 or metrics[0].metric_stat is None:
            return None
        stat = metrics[0].metric_stat
        return WatchedMetric(
            namespace=stat.metric.namespace,
            name=stat.metric.name,
            dimensions=tuple(sorted(stat.metric.dimensions.items())),
            period=stat.period,
            stat=stat.stat,
        )

    def identity(self) -> AlarmIdentity | None:
        """The alarm as its ARN (``resources[0]``), its one metric and its threshold name
        it; None when the event names no CloudWatch alarm ARN for its ``alarmName`` or the
        alarm watches more than one metric."""
        watched = self.watched()
        parsed = parse_alarm_arn(self.resources[0]) if self.resources else None
        if watched is None or parsed is None or parsed[2] != self.detail.alarm_name:
            return None
        account, region, name = parsed
        return AlarmIdentity(
            account=account,
            region=region,
            name=name,
            namespace=watched.namespace,
            metric=watched.name,
            dimensions=watched.dimensions,
            period=watched.period,
            stat=watched.stat,
            threshold=self.detail.state.threshold(),
        )
