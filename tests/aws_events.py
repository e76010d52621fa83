"""EventBridge events shaped as AWS sends them, for tests that drive a handler. The
events the scenario generators also send come from the one builder
(``costtracker.fakes.scenario_events``); what is here is the FSx CloudTrail records
only tests send, in that builder's envelope."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from costtracker.fakes.scenario_events import (
    ACCOUNT,
    REGION,
    TRACKER_METRICS,
    alarm_state_event,
    aws_time,
    capacity_block_event,
    cloudtrail_event,
    ec2_state_event,
    envelope,
    limit,
    reason_data,
    rebalance_event,
    s3_object_event,
    scheduled_event,
    spot_warning_event,
    training_job_event,
)

__all__ = [
    "ACCOUNT",
    "REGION",
    "TRACKER_METRICS",
    "alarm_state_event",
    "capacity_block_event",
    "ec2_state_event",
    "envelope",
    "fsx_call_event",
    "fsx_create_event",
    "fsx_delete_event",
    "fsx_record_delivered",
    "fsx_update_event",
    "limit",
    "reason_data",
    "rebalance_event",
    "s3_object_event",
    "scheduled_event",
    "spot_warning_event",
    "training_job_event",
]


def fsx_record_delivered(record: dict[str, Any], event_id: str) -> dict[str, Any]:
    """A CloudTrail record of FSx (such as the real one in
    ``tests/events/fsx-tag-resource-cloudtrail-record.json``) in the envelope EventBridge
    gives it: account, region and time are the record's own."""
    return cloudtrail_event(event_id, "aws.fsx", record)


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
    time = aws_time(at)
    record = {
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
    }
    return cloudtrail_event(event_id, "aws.fsx", record)


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
