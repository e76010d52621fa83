"""DescribeFileSystems in a file system's own account and region (cost rule 13, "Many
accounts"): the one client factory (``Runtime.accounts``) gives the client, a member
account's through its read role. Lustre file systems only; paginated as published."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Protocol

from shared.adapters.accounts import ClientFactory
from shared.domain.fsx import FileSystemDescription, FileSystemFacts

# Administrative actions that change what a file system is billed for.
_SIZE_ACTIONS = ("FILE_SYSTEM_UPDATE", "STORAGE_OPTIMIZATION")


class FileSystems(Protocol):
    def describe(self, account: str, region: str) -> list[FileSystemDescription]: ...


class FsxFileSystems:
    """``FileSystems`` over the FSx API."""

    def __init__(self, clients: ClientFactory) -> None:
        self._clients = clients

    def describe(self, account: str, region: str) -> list[FileSystemDescription]:
        client = self._clients.client_for("fsx", account, region)
        out: list[FileSystemDescription] = []
        for page in client.get_paginator("describe_file_systems").paginate():
            for fs in page.get("FileSystems", []):
                if fs.get("FileSystemType") != "LUSTRE":
                    continue
                if fs.get("OwnerId") not in (None, account):
                    continue  # a description that names another account is refused
                out.append(description_of(fs, account, region))
        return out


def description_of(fs: dict[str, Any], account: str, region: str) -> FileSystemDescription:
    lustre = fs.get("LustreConfiguration") or {}
    created = fs.get("CreationTime")
    facts = FileSystemFacts(
        file_system_id=fs["FileSystemId"],
        account=account,
        region=region,
        deployment_type=str(lustre.get("DeploymentType", "")),
        storage_type=str(fs.get("StorageType") or "SSD"),
        drive_cache_type=lustre.get("DriveCacheType"),
        storage_gib=int(fs.get("StorageCapacity") or 0),
        throughput_mb_s_per_tib=lustre.get("PerUnitStorageThroughput"),
        tags={t["Key"]: t["Value"] for t in fs.get("Tags", []) if "Key" in t and "Value" in t},
        created_at=created.astimezone(UTC) if isinstance(created, datetime) else None,
    )
    changes = []
    for action in fs.get("AdministrativeActions", []) or []:
        at = action.get("RequestTime")
        if action.get("AdministrativeActionType") not in _SIZE_ACTIONS:
            continue
        if not isinstance(at, datetime) or action.get("Status") == "FAILED":
            continue
        target = action.get("TargetFileSystemValues") or {}
        target_lustre = target.get("LustreConfiguration") or {}
        changes.append(
            (
                at.astimezone(UTC),
                target.get("StorageCapacity"),
                target_lustre.get("PerUnitStorageThroughput"),
            )
        )
    return FileSystemDescription(facts=facts, changes=tuple(sorted(changes)))
