"""EventBridge events shaped as AWS sends them, built in one place: the scenario
generators (``tests/scenarios/make_*.py``, ``examples/``, ``bench/``), the replay's own
events (schedules, a stop's state changes) and the tests that drive handlers
(``tests/aws_events.py``) all take them from here, so each event shape has one
definition. Local-only, like the rest of ``costtracker.fakes``.

``at`` is a UTC datetime or AWS's text (``2026-11-01T10:00:00Z``, kept as given).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

ACCOUNT = "123456789012"
REGION = "us-east-1"

STATE_CHANGE = "EC2 Instance State-change Notification"
SPOT_WARNING = "EC2 Spot Instance Interruption Warning"
REBALANCE = "EC2 Instance Rebalance Recommendation"
ALARM_STATE_CHANGE = "CloudWatch Alarm State Change"
OBJECT_CREATED = "Object Created"
OBJECT_DELETED = "Object Deleted"
TRAINING_JOB_STATE_CHANGE = "SageMaker Training Job State Change"
CLOUDTRAIL_CALL = "AWS API Call via CloudTrail"
SCHEDULED = "Scheduled Event"

# What the tracker's alarms watch by default (``UtilizationConfig``): per family.
TRACKER_METRICS = {
    "neuron": ("NeuronMonitor", "neuroncore_utilization"),
    "gpu": ("CWAgent", "nvidia_smi_utilization_gpu"),
    "cpu": ("AWS/EC2", "CPUUtilization"),
}


def aws_time(at: datetime | str) -> str:
    """An event's ``time`` as AWS writes it (text is kept as given)."""
    return at if isinstance(at, str) else at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def epoch_ms(at: datetime | str) -> int:
    """Epoch milliseconds, as SageMaker writes a training job's times."""
    when = datetime.fromisoformat(at.replace("Z", "+00:00")) if isinstance(at, str) else at
    return int(when.astimezone(UTC).timestamp() * 1000)


def envelope(
    event_id: str,
    at: datetime | str,
    source: str,
    detail_type: str,
    detail: Mapping[str, Any],
    *,
    resources: Sequence[str] = (),
    account: str = ACCOUNT,
    region: str = REGION,
) -> dict[str, Any]:
    """The EventBridge envelope every event below is in (also for a detail no builder
    here makes: a hostile or unknown one)."""
    return {
        "version": "0",
        "id": event_id,
        "detail-type": detail_type,
        "source": source,
        "account": account,
        "time": aws_time(at),
        "region": region,
        "resources": list(resources),
        "detail": dict(detail),
    }


def instance_arn(instance_id: str, *, account: str = ACCOUNT, region: str = REGION) -> str:
    return f"arn:aws:ec2:{region}:{account}:instance/{instance_id}"


def ec2_state_event(
    event_id: str,
    instance_id: str,
    state: str,
    at: datetime | str,
    *,
    account: str = ACCOUNT,
    region: str = REGION,
    resources: Sequence[str] = (),
) -> dict[str, Any]:
    """An EC2 Instance State-change Notification (``tests/events/ec2-state-change.json``)."""
    detail = {"instance-id": instance_id, "state": state}
    return envelope(
        event_id, at, "aws.ec2", STATE_CHANGE, detail,
        resources=resources, account=account, region=region,
    )  # fmt: skip


def spot_warning_event(
    event_id: str,
    instance_id: str,
    at: datetime | str,
    *,
    action: str = "terminate",
    account: str = ACCOUNT,
    region: str = REGION,
    resources: Sequence[str] = (),
) -> dict[str, Any]:
    """An EC2 Spot Instance Interruption Warning (two minutes before ``action``)."""
    detail = {"instance-id": instance_id, "instance-action": action}
    return envelope(
        event_id, at, "aws.ec2", SPOT_WARNING, detail,
        resources=resources, account=account, region=region,
    )  # fmt: skip


def rebalance_event(
    event_id: str,
    instance_id: str,
    at: datetime | str,
    *,
    account: str = ACCOUNT,
    region: str = REGION,
    resources: Sequence[str] = (),
) -> dict[str, Any]:
    """An EC2 Instance Rebalance Recommendation."""
    return envelope(
        event_id, at, "aws.ec2", REBALANCE, {"instance-id": instance_id},
        resources=resources, account=account, region=region,
    )  # fmt: skip


def capacity_block_event(
    event_id: str,
    reservation_id: str,
    detail_type: str,
    at: datetime | str,
    *,
    end: str,
    account: str = ACCOUNT,
    region: str = REGION,
) -> dict[str, Any]:
    """A Capacity Block event (``detail_type``: Delivered, Expiration Warning...) of the
    EC2 user guide's "Monitor Capacity Blocks using EventBridge", ending at ``end``."""
    arn = f"arn:aws:ec2:{region}:{account}:capacity-reservation/{reservation_id}"
    detail = {"capacity-reservation-id": reservation_id, "end-date": end}
    return envelope(
        event_id, at, "aws.ec2", detail_type, detail,
        resources=[arn], account=account, region=region,
    )  # fmt: skip


def s3_object_event(
    event_id: str,
    bucket: str,
    key: str,
    at: datetime | str,
    *,
    deleted: bool = False,
    request_id: str = "R",
    requester: str | None = None,
    resources: Sequence[str] = (),
    account: str = ACCOUNT,
    region: str = REGION,
    **object_fields: object,
) -> dict[str, Any]:
    """An S3 Object Created (or, ``deleted``, Object Deleted) event of ``bucket``/``key``;
    ``object_fields`` (size, etag, sequencer) follow the key in the order given, and are
    left out when not given (a size S3 did not send is a bad input the tests make)."""
    detail: dict[str, Any] = {
        "version": "0",
        "bucket": {"name": bucket},
        "object": {"key": key, **object_fields},
        "request-id": request_id,
        "requester": requester or account,
        "reason": "DeleteObject" if deleted else "PutObject",
    }
    if deleted:
        detail["deletion-type"] = "Permanently Deleted"
    kind = OBJECT_DELETED if deleted else OBJECT_CREATED
    return envelope(
        event_id, at, "aws.s3", kind, detail, resources=resources, account=account, region=region
    )


def limit(metric: tuple[str, str]) -> float:
    """The threshold the tracker puts on ``metric`` by default (CPU 10 %, accelerator 5 %)."""
    return 10.0 if metric == ("AWS/EC2", "CPUUtilization") else 5.0


def reason_data(
    stamp: str, stat: str, period: int, threshold: float, recent: Sequence[float] = ()
) -> str:
    """``state.reasonData`` as CloudWatch writes it for a threshold alarm."""
    data = {"version": "1.0", "queryDate": stamp, "statistic": stat, "period": period}
    return json.dumps(
        {**data, "recentDatapoints": list(recent), "threshold": threshold}, separators=(",", ":")
    )


def alarm_state_event(
    event_id: str,
    alarm_name: str,
    state: str,
    at: datetime | str,
    *,
    metric: tuple[str, str],
    instance_id: str,
    previous: str = "OK",
    threshold: float | None = None,
    period: int = 300,
    stat: str = "Average",
    recent: Sequence[float] = (),
    return_data: bool = True,
    previous_fields: Sequence[str] = ("reason", "reasonData"),
    state_reason_data: str | None = None,
    account: str = ACCOUNT,
    region: str = REGION,
) -> dict[str, Any]:
    """A CloudWatch Alarm State Change of a one-metric alarm from ``previous`` to
    ``state`` (``tests/events/alarm-state-change-single-metric.json``; ``metric``:
    namespace, name). ``threshold`` is what its ``reasonData`` says (default the
    tracker's for the metric), unless ``state_reason_data`` gives that text whole;
    ``previous_fields``: the text fields ``previousState`` carries (each empty);
    ``return_data`` False: the metric query says nothing of ``returnData``."""
    time = aws_time(at)
    stamp = time.replace("Z", ".000+0000")
    namespace, name = metric
    query: dict[str, Any] = {"id": "m1"}
    if return_data:
        query["returnData"] = True
    query["metricStat"] = {
        "metric": {"namespace": namespace, "name": name, "dimensions": {"InstanceId": instance_id}},
        "period": period,
        "stat": stat,
    }
    if state_reason_data is None:
        compared = limit(metric) if threshold is None else threshold
        state_reason_data = reason_data(stamp, stat, period, compared, recent)
    detail = {
        "alarmName": alarm_name,
        "configuration": {"metrics": [query]},
        "previousState": {"value": previous, "timestamp": stamp}
        | {field: "" for field in previous_fields},
        "state": {
            "value": state,
            "timestamp": stamp,
            "reason": "Threshold Crossed",
            "reasonData": state_reason_data,
        },
    }
    arn = f"arn:aws:cloudwatch:{region}:{account}:alarm:{alarm_name}"
    return envelope(
        event_id, time, "aws.cloudwatch", ALARM_STATE_CHANGE, detail,
        resources=[arn], account=account, region=region,
    )  # fmt: skip


def training_job_arn(name: str, *, account: str = ACCOUNT, region: str = REGION) -> str:
    return f"arn:aws:sagemaker:{region}:{account}:training-job/{name}"


def training_job_event(
    event_id: str,
    at: datetime | str,
    detail: Mapping[str, Any],
    *,
    account: str = ACCOUNT,
    region: str = REGION,
) -> dict[str, Any]:
    """A SageMaker Training Job State Change: its ``detail`` is the job as
    DescribeTrainingJob describes it (``TrainingJobArn`` among it), which each scenario
    writes for its own jobs."""
    return envelope(
        event_id, at, "aws.sagemaker", TRAINING_JOB_STATE_CHANGE, detail,
        resources=[str(detail["TrainingJobArn"])], account=account, region=region,
    )  # fmt: skip


def cloudtrail_event(event_id: str, source: str, record: Mapping[str, Any]) -> dict[str, Any]:
    """A CloudTrail ``record`` of a service (``source``: ``aws.fsx``...) in the envelope
    EventBridge gives it: account, region and time are the record's own."""
    return envelope(
        event_id, str(record["eventTime"]), source, CLOUDTRAIL_CALL, record,
        account=str(record["recipientAccountId"]), region=str(record["awsRegion"]),
    )  # fmt: skip


def scheduled_event(
    event_id: str,
    at: datetime | str,
    *,
    source: str = "aws.events",
    resources: Sequence[str] = (),
    account: str = ACCOUNT,
    region: str = REGION,
) -> dict[str, Any]:
    """A Scheduled Event of an EventBridge rule (``aws.events``) or of EventBridge
    Scheduler (``aws.scheduler``)."""
    return envelope(
        event_id, at, source, SCHEDULED, {}, resources=resources, account=account, region=region
    )
