"""Checkpoint object heads, their sealed versions, step markers and unmatched objects
(keys in ``shared.adapters.keys``); as the other stores, a write is staged into the
event's unit of work, kept once written and forgotten on a conflict, and every write is
guarded by a version or a condition."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from functools import partial
from typing import Any

from shared.adapters import keys
from shared.adapters import ledger_schema as schema
from shared.adapters.table import (
    Above,
    Absent,
    Below,
    Condition,
    Item,
    Put,
    Table,
    Update,
    VersionIs,
    apply_update,
)
from shared.adapters.unit_of_work import UnitOfWork
from shared.domain.checkpoint import CheckpointHead, Version
from shared.domain.index_facts import index_facts

# A head's attribute: when its object's last stored version ended (absent while stored).
STORED_UNTIL = "stored_until"


class CheckpointStore:
    """Checkpoint object heads, sealed versions and step markers."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self._heads: dict[tuple[str, str, str, str], CheckpointHead] = {}
        self._steps: dict[tuple[str, str], Item] = {}

    def head(
        self, job_id: str, account: str, bucket: str, key: str, *, read: bool = True
    ) -> CheckpointHead | None:
        """The object's head from this container's cache, else the table; with
        ``read=False`` a miss is taken as "no head yet" (the write is then conditional on
        the item being absent, so a wrong guess fails and is retried with a read)."""
        cache_key = (job_id, account, bucket, key)
        if cache_key in self._heads:
            return self._heads[cache_key]
        if not read:
            return None
        item = self.table.get(keys.job_pk(job_id), keys.checkpoint_head_sk(account, bucket, key))
        if item is None:
            return None
        head = checkpoint_of(item)
        self._heads[cache_key] = head
        return head

    def stage_head(
        self, uow: UnitOfWork, head: CheckpointHead, expected_version: int | None
    ) -> Put:
        """Write ``head`` if the stored one is still at ``expected_version`` (None: none
        yet); kept once written, forgotten on a conflict. A head already at the next
        version (as ``apply_object_event`` makes it) is written as it is."""
        version = (expected_version or 0) + 1
        stored = head if head.version == version else head.model_copy(update={"version": version})
        op = self._put_head(stored, expected_version)
        uow.add(
            op,
            on_commit=partial(self._remember, stored),
            on_conflict=partial(self._forget_head, head),
        )
        return op

    def _forget_head(self, head: CheckpointHead) -> None:
        self._heads.pop((head.job_id, head.account, head.bucket, head.key), None)

    def _put_head(self, head: CheckpointHead, expected_version: int | None) -> Put:
        """The put of ``head``, already at its new version."""
        item: Item = {
            "pk": keys.job_pk(head.job_id),
            "sk": keys.checkpoint_head_sk(head.account, head.bucket, head.key),
            "kind": "checkpoint",
            "job_id": head.job_id,
            "account": head.account,
            "version": head.version,
            "record": head.model_dump_json(),
        }
        if (until := head.stored_until) is not None:
            item[STORED_UNTIL] = keys.iso(until)  # readers of a day skip what ended before
        item |= schema.index_entries(
            index_facts(head), f"{head.account}#{head.bucket}/{head.key}", "checkpoint"
        )
        condition: Condition = Absent() if expected_version is None else VersionIs(expected_version)
        return Put(item, [condition])

    def _remember(self, stored: CheckpointHead) -> None:
        """Keep what was written (``stored``: the record at its new version, saving a parse)."""
        self._heads[(stored.job_id, stored.account, stored.bucket, stored.key)] = stored

    def sealed_version(self, head: CheckpointHead, version: Version, void: bool = False) -> Put:
        assert version.end is not None
        item: Item = {
            "pk": keys.job_pk(head.job_id),
            "sk": keys.sealed_sk(
                version.end, "V", head.account, f"{head.bucket}/{head.key}", version.write_event_id
            ),
            "kind": "version",
            "account": head.account,
            "object": f"s3://{head.bucket}/{head.key}",
            "step": head.step,
            "region": head.region,
            "record": version.model_dump_json(),
        }
        if void:
            item["void"] = True
        return Put(item)

    def sealed_versions(self, head: CheckpointHead) -> list[Version]:
        """The object's sealed versions (not voided), read from the table (one Query of
        the job's sealed records)."""
        name = f"s3://{head.bucket}/{head.key}"
        return [
            Version.model_validate_json(str(item["record"]))
            for item in self.table.query(keys.job_pk(head.job_id), sk_from="E#", sk_to="E#~")
            if item.get("kind") == "version"
            and not item.get("void")
            and item.get("object") == name
            and item.get("account") == head.account
        ]

    def step_marker(self, job_id: str, step: str, *, read: bool = True) -> Item | None:
        """The step's marker (cached); ``read=False`` as for ``head``."""
        cache_key = (job_id, step)
        if cache_key not in self._steps:
            if not read:
                return None
            self._steps[cache_key] = self.table.get(keys.job_pk(job_id), keys.step_sk(step)) or {}
        return self._steps[cache_key] or None

    def stage_step(
        self,
        uow: UnitOfWork,
        job_id: str,
        step: str,
        write_at: str,
        new_object: bool,
        complete_at: str | None,
        *,
        read: bool = True,
    ) -> Update:
        """Count a write into the step's marker (``read`` as for ``step_marker``); the
        marker is kept as written, and forgotten on a conflict."""
        op = self._step_update(job_id, step, write_at, new_object, complete_at, read=read)
        uow.add(
            op,
            on_commit=partial(self._remember_step, job_id, step, op),
            on_conflict=partial(self._forget_step, job_id, step),
        )
        return op

    def _forget_step(self, job_id: str, step: str) -> None:
        self._steps.pop((job_id, step), None)

    def _step_update(
        self,
        job_id: str,
        step: str,
        write_at: str,
        new_object: bool,
        complete_at: str | None,
        *,
        read: bool = True,
    ) -> Update:
        current = self.step_marker(job_id, step, read=read) or {}
        sets: dict[str, Any] = {}
        conditions: list[Condition] = []
        if not current:
            conditions.append(Absent())
        if "first_write" not in current or current["first_write"] > write_at:
            sets["first_write"] = write_at
            conditions.append(Above("first_write", write_at))
        if "last_write" not in current or current["last_write"] < write_at:
            sets["last_write"] = write_at
            conditions.append(Below("last_write", write_at))
        if complete_at is not None and (
            "complete_at" not in current or current["complete_at"] > complete_at
        ):
            sets["complete_at"] = complete_at
            conditions.append(Above("complete_at", complete_at))
        return Update(
            keys.job_pk(job_id),
            keys.step_sk(step),
            add={"objects": Decimal(1)} if new_object else {},
            set=sets,
            set_if_absent={"kind": "step", "step": step},
            conditions=conditions,
        )

    def step_markers(self, job_id: str) -> list[Item]:
        """Every step marker of the job (one Query, read from the table)."""
        return list(self.table.query(keys.job_pk(job_id), begins_with=keys.STEP_PREFIX))

    def _remember_step(self, job_id: str, step: str, op: Update) -> None:
        self._steps[(job_id, step)] = apply_update(self._steps.get((job_id, step)) or None, op)

    def unmatched(self, bucket: str, key: str, event_id: str, at: datetime) -> Put:
        return Put(
            {
                "pk": "UNMATCHED",
                "sk": f"{bucket}/{key}",
                "kind": "unmatched",
                "bucket": bucket,
                "key": key,
                "event_id": event_id,
                "at": keys.iso(at),
            }
        )

    def record_unmatched(self, bucket: str, key: str, event_id: str, at: datetime) -> None:
        """Note an object no job claims (idempotent: one item per object)."""
        self.table.transact([self.unmatched(bucket, key, event_id, at)])

    def unmatched_objects(self) -> list[tuple[str, str]]:
        return [(str(i["bucket"]), str(i["key"])) for i in self.table.query("UNMATCHED")]


def checkpoint_of(item: Item) -> CheckpointHead:
    """The head an item holds, at the item's version (its record names the same one when
    written by ``stage_head``: then no copy is made)."""
    head = CheckpointHead.model_validate_json(item["record"])
    version = int(item["version"])
    return head if head.version == version else head.model_copy(update={"version": version})
