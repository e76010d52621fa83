"""FSx for Lustre file system heads (``FSX#<account>#<id>`` / ``HEAD``): one per file
system, whatever its job, so that an update or deletion (which carries no tags) finds it.
As the other stores: a write is staged into the event's unit of work, kept once written
and forgotten on a conflict; every write is guarded by a version;
a live file system sits in the open-index (``FILE_SYSTEMS``) for the daily refresh."""

from __future__ import annotations

from functools import partial

from shared.adapters import keys
from shared.adapters import ledger_schema as schema
from shared.adapters.table import Absent, Condition, Item, Put, Table, VersionIs
from shared.adapters.unit_of_work import UnitOfWork
from shared.domain.fsx import FileSystemHead
from shared.domain.index_facts import NOT_INDEXED, REFRESHED_FILE_SYSTEM

FILE_SYSTEMS = "FILE_SYSTEMS"


class FileSystemStore:
    def __init__(self, table: Table) -> None:
        self.table = table
        self._heads: dict[tuple[str, str], FileSystemHead] = {}

    def head(self, account: str, file_system_id: str) -> FileSystemHead | None:
        key = (account, file_system_id)
        if key not in self._heads:
            item = self.table.get(*keys.file_system_key(account, file_system_id))
            if item is None:
                return None
            self._heads[key] = file_system_of(item)
        return self._heads[key]

    def stage(self, uow: UnitOfWork, head: FileSystemHead, expected_version: int | None) -> Put:
        """Write ``head`` if the stored one is still at ``expected_version`` (None: none yet)."""
        op = self._put(head, expected_version)
        key = (head.account, head.file_system_id)
        uow.add(op, on_commit=partial(self._remember, op), on_conflict=partial(self._forget, key))
        return op

    def _put(self, head: FileSystemHead, expected_version: int | None) -> Put:
        stored = head.model_copy(update={"version": (expected_version or 0) + 1})
        condition: Condition = Absent() if expected_version is None else VersionIs(expected_version)
        pk, sk = keys.file_system_key(head.account, head.file_system_id)
        item: Item = {
            "pk": pk,
            "sk": sk,
            "kind": "file_system",
            "account": head.account,
            "version": stored.version,
            "record": stored.model_dump_json(),
        }
        if head.job_id is not None:
            item["job_id"] = head.job_id
        facts = REFRESHED_FILE_SYSTEM if head.deleted_at is None else NOT_INDEXED
        item |= schema.index_entries(facts, f"{head.account}#{head.file_system_id}")
        return Put(item, [condition])

    def _remember(self, op: Put) -> None:
        head = file_system_of(op.item)
        self._heads[(head.account, head.file_system_id)] = head

    def _forget(self, key: tuple[str, str]) -> None:
        self._heads.pop(key, None)

    def live(self) -> list[FileSystemHead]:
        """The file systems not yet deleted (sparse index, one Query)."""
        return [
            file_system_of(i)
            for i in self.table.query(FILE_SYSTEMS, index=schema.OPEN_INDEX.name)
            if i.get("kind") == "file_system"
        ]


def file_system_of(item: Item) -> FileSystemHead:
    head = FileSystemHead.model_validate_json(str(item["record"]))
    return head.model_copy(update={"version": int(item["version"])})
