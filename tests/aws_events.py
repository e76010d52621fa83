"""EventBridge events shaped as AWS sends them (``tests/events/ec2-state-change.json``),
built for tests that drive a handler: one builder instead of a literal per test module."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

ACCOUNT = "123456789012"
REGION = "us-east-1"


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
    """An EC2 Instance State-change Notification (``at``: a UTC datetime or AWS's text)."""
    time = at if isinstance(at, str) else at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "version": "0",
        "id": event_id,
        "detail-type": "EC2 Instance State-change Notification",
        "source": "aws.ec2",
        "account": account,
        "time": time,
        "region": region,
        "resources": list(resources),
        "detail": {"instance-id": instance_id, "state": state},
    }


# What the tracker's alarms watch by default (``UtilizationConfig``): per family.
TRACKER_METRICS = {
    "neuron": ("NeuronMonitor", "neuroncore_utilization"),
    "gpu": ("CWAgent", "nvidia_smi_utilization_gpu"),
    "cpu": ("AWS/EC2", "CPUUtilization"),
}


def alarm_state_event(
    event_id: str,
    alarm_name: str,
    state: str,
    at: datetime | str,
    *,
    metric: tuple[str, str],
    instance_id: str,
    period: int = 300,
    stat: str = "Average",
    account: str = ACCOUNT,
    region: str = REGION,
) -> dict[str, Any]:
    """A CloudWatch Alarm State Change of a one-metric alarm, shaped as
    ``tests/events/alarm-state-change-single-metric.json`` (``metric``: namespace, name)."""
    time = at if isinstance(at, str) else at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    stamp = time.replace("Z", ".000+0000")
    namespace, name = metric
    return {
        "version": "0",
        "id": event_id,
        "detail-type": "CloudWatch Alarm State Change",
        "source": "aws.cloudwatch",
        "account": account,
        "time": time,
        "region": region,
        "resources": [f"arn:aws:cloudwatch:{region}:{account}:alarm:{alarm_name}"],
        "detail": {
            "alarmName": alarm_name,
            "configuration": {
                "metrics": [
                    {
                        "id": "m1",
                        "metricStat": {
                            "metric": {
                                "dimensions": {"InstanceId": instance_id},
                                "name": name,
                                "namespace": namespace,
                            },
                            "period": period,
                            "stat": stat,
                        },
                        "returnData": True,
                    }
                ]
            },
            "previousState": {"value": "OK", "timestamp": stamp, "reason": ""},
            "state": {"value": state, "timestamp": stamp, "reason": "Threshold Crossed"},
        },
    }


def fsx_record_delivered(record: dict[str, Any], event_id: str) -> dict[str, Any]:
    """A CloudTrail record of FSx (such as the real one in
    ``tests/events/fsx-tag-resource-cloudtrail-record.json``) in the envelope EventBridge
    gives it: account, region and time are the record's own."""
    return {
        "version": "0",
        "id": event_id,
        "detail-type": "AWS API Call via CloudTrail",
        "source": "aws.fsx",
        "account": record["recipientAccountId"],
        "time": record["eventTime"],
        "region": record["awsRegion"],
        "resources": [],
        "detail": record,
    }


def fsx_call_event(
    event_id: str,
    name: str,
    at: datetime | str,
    *,
    request: dict[str, Any] | None = None,
    response: dict[str, Any] | None = None,
    account: str = ACCOUNT,
    region: str = REGION,
) -> dict[str, Any]:
    """An FSx API call as EventBridge forwards it from CloudTrail (the envelope and record
    fields of ``tests/events/fsx-create-file-system-cloudtrail.json``)."""
    time = at if isinstance(at, str) else at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "version": "0",
        "id": event_id,
        "detail-type": "AWS API Call via CloudTrail",
        "source": "aws.fsx",
        "account": account,
        "time": time,
        "region": region,
        "resources": [],
        "detail": {
            "eventVersion": "1.08",
            "eventTime": time,
            "eventSource": "fsx.amazonaws.com",
            "eventName": name,
            "awsRegion": region,
            "requestParameters": request or {},
            "responseElements": response,
            "eventID": f"ct-{event_id}",
            "eventType": "AwsApiCall",
            "recipientAccountId": account,
        },
    }


def fsx_create_event(
    event_id: str,
    file_system_id: str,
    at: datetime | str,
    *,
    storage_gib: int,
    deployment_type: str = "PERSISTENT_2",
    throughput: int | None = 125,
    tags: dict[str, str] | None = None,
    storage_type: str = "SSD",
    account: str = ACCOUNT,
    region: str = REGION,
) -> dict[str, Any]:
    lustre: dict[str, Any] = {"deploymentType": deployment_type}
    if throughput is not None:
        lustre["perUnitStorageThroughput"] = throughput
    tag_list = [{"key": k, "value": v} for k, v in (tags or {}).items()]
    request = {
        "fileSystemType": "LUSTRE",
        "storageCapacity": storage_gib,
        "storageType": storage_type,
        "tags": tag_list,
        "lustreConfiguration": lustre,
    }
    response = {
        "fileSystem": {
            "ownerId": account,
            "fileSystemId": file_system_id,
            "fileSystemType": "LUSTRE",
            "lifecycle": "CREATING",
            "storageCapacity": storage_gib,
            "storageType": storage_type,
            "tags": tag_list,
            "lustreConfiguration": lustre,
        }
    }
    return fsx_call_event(
        event_id,
        "CreateFileSystem",
        at,
        request=request,
        response=response,
        account=account,
        region=region,
    )


def fsx_update_event(
    event_id: str,
    file_system_id: str,
    at: datetime | str,
    *,
    storage_gib: int | None = None,
    throughput: int | None = None,
    account: str = ACCOUNT,
    region: str = REGION,
) -> dict[str, Any]:
    request: dict[str, Any] = {"fileSystemId": file_system_id}
    if storage_gib is not None:
        request["storageCapacity"] = storage_gib
    if throughput is not None:
        request["lustreConfiguration"] = {"perUnitStorageThroughput": throughput}
    response = {"fileSystem": {"fileSystemId": file_system_id, "fileSystemType": "LUSTRE"}}
    return fsx_call_event(
        event_id,
        "UpdateFileSystem",
        at,
        request=request,
        response=response,
        account=account,
        region=region,
    )


def fsx_delete_event(
    event_id: str,
    file_system_id: str,
    at: datetime | str,
    *,
    account: str = ACCOUNT,
    region: str = REGION,
) -> dict[str, Any]:
    return fsx_call_event(
        event_id,
        "DeleteFileSystem",
        at,
        request={"fileSystemId": file_system_id},
        response={"fileSystemId": file_system_id, "lifecycle": "DELETING"},
        account=account,
        region=region,
    )
