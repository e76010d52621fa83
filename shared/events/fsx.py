"""FSx for Lustre API calls as EventBridge delivers them from CloudTrail (cost rule 13).

detail-type "AWS API Call via CloudTrail", source ``aws.fsx``; ``detail`` is the CloudTrail
record. What is read, and its traps:

- ``eventName``: ``CreateFileSystem``, ``UpdateFileSystem`` or ``DeleteFileSystem``;
  ``eventTime`` is when the call was made (the envelope's ``time`` is the same moment);
- the file system's id: ``responseElements.fileSystem.fileSystemId`` (a create or update),
  ``responseElements.fileSystemId`` or ``requestParameters.fileSystemId`` (a deletion);
- CloudTrail writes the API's members in camelCase (``storageCapacity``,
  ``lustreConfiguration.perUnitStorageThroughput``), tags as ``[{"key", "value"}]``;
- a failed call carries ``errorCode`` and no response: it changed nothing and is ignored;
- only Lustre file systems are costed (``fileSystemType`` ``LUSTRE``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator, model_validator

from shared.domain.fsx import FileSystemFacts
from shared.events.envelope import AwsEvent, to_utc

FSX_EVENT_NAMES = ("CreateFileSystem", "UpdateFileSystem", "DeleteFileSystem")


class _Lenient(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)


class CloudTrailFsxRecord(_Lenient):
    event_name: Literal["CreateFileSystem", "UpdateFileSystem", "DeleteFileSystem"] = Field(
        alias="eventName"
    )
    event_time: AwareDatetime = Field(alias="eventTime")
    event_id: str = Field(default="", alias="eventID")
    aws_region: str = Field(default="", alias="awsRegion")
    recipient_account_id: str = Field(default="", alias="recipientAccountId")
    error_code: str | None = Field(default=None, alias="errorCode")
    request_parameters: dict[str, Any] | None = Field(default=None, alias="requestParameters")
    response_elements: dict[str, Any] | None = Field(default=None, alias="responseElements")

    @field_validator("event_time")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        return to_utc(value)

    @property
    def request(self) -> dict[str, Any]:
        return self.request_parameters or {}

    @property
    def file_system(self) -> dict[str, Any]:
        found = (self.response_elements or {}).get("fileSystem")
        return found if isinstance(found, dict) else {}

    @property
    def file_system_id(self) -> str | None:
        for value in (
            self.file_system.get("fileSystemId"),
            (self.response_elements or {}).get("fileSystemId"),
            self.request.get("fileSystemId"),
        ):
            if isinstance(value, str) and value:
                return value
        return None


class FsxApiCallEvent(AwsEvent):
    """An FSx API call recorded by CloudTrail, forwarded by EventBridge. A successful call
    that lacks what it must carry is malformed (rejected at the edge, logged with its id)."""

    source: Literal["aws.fsx"]
    detail_type: Literal["AWS API Call via CloudTrail"] = Field(alias="detail-type")
    detail: CloudTrailFsxRecord

    @model_validator(mode="after")
    def _complete(self) -> FsxApiCallEvent:
        if self.detail.error_code:
            return self
        if self.detail.event_name == "CreateFileSystem":
            created_facts(self)  # raises ValueError: a Lustre creation without its facts
        elif self.detail.file_system_id is None:
            raise ValueError(f"{self.detail.event_name} record without a file system id")
        return self

    @property
    def account_id(self) -> str:
        return self.detail.recipient_account_id or self.account

    @property
    def region_name(self) -> str:
        return self.detail.aws_region or self.region


def _tags(raw: Any) -> dict[str, str]:
    """CloudTrail's ``[{"key", "value"}]`` (the API's ``[{"Key", "Value"}]`` too)."""
    out: dict[str, str] = {}
    if isinstance(raw, list):
        for entry in raw:
            if isinstance(entry, dict):
                key = entry.get("key", entry.get("Key"))
                value = entry.get("value", entry.get("Value"))
                if isinstance(key, str) and isinstance(value, str):
                    out[key] = value
    return out


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def created_facts(event: FsxApiCallEvent) -> FileSystemFacts | None:
    """A Lustre file system from a successful ``CreateFileSystem`` (None: not Lustre, or
    a failed call); raises ValueError when the record lacks what it must carry."""
    record = event.detail
    fs, request = record.file_system, record.request
    kind = str(fs.get("fileSystemType") or request.get("fileSystemType") or "").upper()
    if record.error_code or kind != "LUSTRE":
        return None
    fs_id = record.file_system_id
    lustre = fs.get("lustreConfiguration") or request.get("lustreConfiguration") or {}
    storage = _int(fs.get("storageCapacity", request.get("storageCapacity")))
    if fs_id is None or storage is None or not lustre.get("deploymentType"):
        raise ValueError(
            "CreateFileSystem record without fileSystemId, storageCapacity or "
            "lustreConfiguration.deploymentType"
        )
    tags = _tags(request.get("tags")) or _tags(fs.get("tags"))
    return FileSystemFacts(
        file_system_id=fs_id,
        account=str(fs.get("ownerId") or event.account_id),
        region=event.region_name,
        deployment_type=str(lustre["deploymentType"]),
        storage_type=str(fs.get("storageType") or request.get("storageType") or "SSD"),
        drive_cache_type=lustre.get("driveCacheType"),
        storage_gib=storage,
        throughput_mb_s_per_tib=_int(lustre.get("perUnitStorageThroughput")),
        tags=tags,
        created_at=record.event_time,
    )


def updated_values(event: FsxApiCallEvent) -> tuple[int | None, int | None]:
    """(storage GiB, MB/s per TiB) an ``UpdateFileSystem`` asked for (None: unchanged)."""
    request = event.detail.request
    lustre = request.get("lustreConfiguration") or {}
    return _int(request.get("storageCapacity")), _int(lustre.get("perUnitStorageThroughput"))
