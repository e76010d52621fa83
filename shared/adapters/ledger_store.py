"""Stores of the ledger's records, one per kind, over one ``Table``.

Each store turns domain records into items and operations; the services
combine operations into one transaction per event. Writers keep what they
wrote (a warm Lambda container or the replay reuses it without a read); every
write is guarded by a version or a condition, so a stale copy only costs a
retry, never a lost update.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from shared.adapters import keys
from shared.adapters.table import (
    Above,
    Absent,
    Below,
    Condition,
    Item,
    Operation,
    Put,
    Table,
    Update,
    VersionIs,
)
from shared.domain import accrual as acc
from shared.domain.accrual import Accrual
from shared.domain.checkpoint import CheckpointHead, Version
from shared.domain.instance import InstanceHead
from shared.domain.lifecycle import Notice
from shared.domain.segments import SegmentCost


@dataclass(frozen=True)
class Pointer:
    """Which job an instance belongs to (None: not tracked)."""

    account: str
    instance_id: str
    job_id: str | None


class InstanceStore:
    """Instance pointers, heads and sealed segments."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self._pointers: dict[tuple[str, str], Pointer] = {}
        self._heads: dict[tuple[str, str, str], InstanceHead] = {}
        self._accruals: dict[int, Accrual] = {}  # by id() of a cached head

    # pointers
    def pointer(self, account: str, instance_id: str) -> Pointer | None:
        cached = self._pointers.get((account, instance_id))
        if cached is not None:
            return cached
        item = self.table.get(*keys.pointer(account, instance_id))
        if item is None:
            return None
        found = Pointer(account, instance_id, item.get("job_id") or None)
        self._pointers[(account, instance_id)] = found
        return found

    def put_pointer(self, pointer: Pointer, expires_at: int | None = None) -> Put:
        pk, sk = keys.pointer(pointer.account, pointer.instance_id)
        item: Item = {"pk": pk, "sk": sk, "kind": "pointer", "job_id": pointer.job_id or ""}
        if expires_at is not None:
            item["expires_at"] = expires_at
        return Put(item, [Absent()])

    def remember_pointer(self, pointer: Pointer) -> None:
        self._pointers[(pointer.account, pointer.instance_id)] = pointer

    # heads
    def head(self, job_id: str, account: str, instance_id: str) -> InstanceHead | None:
        key = (job_id, account, instance_id)
        cached = self._heads.get(key)
        if cached is not None:
            return cached
        item = self.table.get(keys.job_pk(job_id), keys.instance_head_sk(account, instance_id))
        if item is None:
            return None
        head = head_of(item)
        self._heads[key] = head
        return head

    def forget(self, job_id: str, account: str, instance_id: str) -> None:
        head = self._heads.pop((job_id, account, instance_id), None)
        if head is not None:
            self._accruals.pop(id(head), None)
        self._pointers.pop((account, instance_id), None)

    def put_head(self, head: InstanceHead, expected_version: int | None) -> Put:
        stored = head.model_copy(update={"version": (expected_version or 0) + 1})
        condition: Condition = Absent() if expected_version is None else VersionIs(expected_version)
        return Put(head_item(stored), [condition])

    def remember(
        self, op: Put, head: InstanceHead | None = None, accrual: Accrual | None = None
    ) -> None:
        """Keep what was written (``head``: the same record, saving a parse)."""
        if head is None:
            head = head_of(op.item)
        else:
            head = head.model_copy(update={"version": int(op.item["version"])})
        key = (head.job_id, head.account, head.instance_id)
        previous = self._heads.get(key)
        if previous is not None:
            self._accruals.pop(id(previous), None)
        self._heads[key] = head
        if accrual is not None:
            self._accruals[id(head)] = accrual

    def accrual(self, head: InstanceHead) -> Accrual:
        """The head's accrual, computed once per cached head."""
        from shared.domain.instance import head_accrual

        if self._heads.get((head.job_id, head.account, head.instance_id)) is not head:
            return head_accrual(head)
        found = self._accruals.get(id(head))
        if found is None:
            found = self._accruals[id(head)] = head_accrual(head)
        return found

    def sealed_segment(self, head: InstanceHead, cost: SegmentCost, void: bool = False) -> Put:
        assert cost.record_end is not None
        item: Item = {
            "pk": keys.job_pk(head.job_id),
            "sk": keys.sealed_sk(
                cost.record_end, "S", head.account, head.instance_id, cost.span.start_event_id
            ),
            "kind": "segment",
            "account": head.account,
            "instance_id": head.instance_id,
            "record": cost.model_dump_json(),
        }
        episodes = [e for e in head.idle if e.segment_key == cost.span.key and e.end is not None]
        if episodes and not void:
            item["idle"] = json.dumps([json.loads(e.model_dump_json()) for e in episodes])
        if void:
            item["void"] = True
        elif not cost.priced:
            item["gsi_unpriced_pk"] = "UNPRICED"
            item["gsi_unpriced_sk"] = f"segment#{head.account}#{head.instance_id}"
        return Put(item)

    def notice_item(self, head: InstanceHead, notice: Notice) -> Put:
        return Put(
            {
                "pk": keys.job_pk(head.job_id),
                "sk": keys.notice_sk(notice.at, head.account, head.instance_id, notice.event_id),
                "kind": "notice",
                "account": head.account,
                "instance_id": head.instance_id,
                "record": notice.model_dump_json(),
            }
        )

    def open_heads(self) -> Iterator[InstanceHead]:
        for item in self.table.query("OPEN", index=keys.OPEN_INDEX):
            if item.get("kind") == "instance":
                yield head_of(item)

    def accruing_heads(self) -> Iterator[InstanceHead]:
        for item in self.table.query("ACCRUING", index=keys.OPEN_INDEX):
            if item.get("kind") == "instance":
                yield head_of(item)


def head_item(head: InstanceHead) -> Item:
    item: Item = {
        "pk": keys.job_pk(head.job_id),
        "sk": keys.instance_head_sk(head.account, head.instance_id),
        "kind": "instance",
        "job_id": head.job_id,
        "account": head.account,
        "instance_id": head.instance_id,
        "version": head.version,
        "record": head.model_dump_json(),
    }
    if head.open_segment is not None:
        item["gsi_open_pk"] = "OPEN"
        item["gsi_open_sk"] = f"{head.account}#{head.instance_id}"
    elif head.first_running_at is not None and not head.terminated and head.profile.volumes:
        item["gsi_open_pk"] = "ACCRUING"
        item["gsi_open_sk"] = f"{head.account}#{head.instance_id}"
    if any(not s.priced for s in head.segments) or any(
        k.startswith("a|unpriced:") for k in head.sealed
    ):
        item["gsi_unpriced_pk"] = "UNPRICED"
        item["gsi_unpriced_sk"] = f"instance#{head.account}#{head.instance_id}"
    return item


def head_of(item: Item) -> InstanceHead:
    head = InstanceHead.model_validate_json(item["record"])
    return head.model_copy(update={"version": int(item["version"])})


# -- rollups -----------------------------------------------------------------------------


@dataclass
class RollupChange:
    """A change to one job's rollup: accrual deltas and facts that only move one way."""

    job_id: str
    account: str
    delta: Accrual = field(default_factory=Accrual)
    # name -> value, kept as the minimum / maximum of what writers report
    at_least: dict[str, str] = field(default_factory=dict)
    at_most: dict[str, str] = field(default_factory=dict)
    add_strings: dict[str, set[str]] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)
    # grouping tags, replaced when reported by a record that ran earlier (``tags_from`` lower)
    tags: dict[str, str] | None = None
    tags_from: str | None = None


# A rollup counter of the writes that changed a job's past (an event older than the day
# it was applied on, a price filled in later): a figure computed for a past moment stays
# right while the job's counters are unchanged.
PAST_CHANGES = "past_changes"


class RollupStore:
    """Per-job (and account) rollups in one partition: the job list and budgets read
    them all with one Query."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self._cache: dict[tuple[str, str], Item] = {}
        # Per container: (job, moment) -> (the job's past-changes stamp, its spend then).
        self.books: dict[tuple[str, datetime], tuple[tuple[tuple[str, int], ...], Decimal]] = {}

    def cached(self, job_id: str, account: str) -> Item | None:
        key = (job_id, account)
        if key not in self._cache:
            item = self.table.get(keys.job_pk(job_id), keys.rollup_sk(account))
            self._cache[key] = item or {}
        return self._cache[key] or None

    def forget(self, job_id: str, account: str) -> None:
        self._cache.pop((job_id, account), None)

    def update(self, change: RollupChange) -> Update | None:
        """The operation for a change, or None when it changes nothing."""
        current = self.cached(change.job_id, change.account) or {}
        add: dict[str, Any] = {k: v for k, v in acc.to_attributes(change.delta).items()}
        add.update({k: Decimal(v) for k, v in change.counters.items() if v})
        for name, values in change.add_strings.items():
            missing = values - set(current.get(name, set()))
            if missing:
                add[name] = set(missing)
        sets: dict[str, Any] = {}
        conditions: list[Condition] = []
        for name, value in change.at_least.items():
            if name not in current or current[name] < value:
                sets[name] = value
                conditions.append(Below(name, value))
        for name, value in change.at_most.items():
            if name not in current or current[name] > value:
                sets[name] = value
                conditions.append(Above(name, value))
        earlier = change.tags_from is not None and (
            "tags_from" not in current or current["tags_from"] > change.tags_from
        )
        if change.tags is not None and change.tags_from is not None and earlier:
            sets["tags"] = change.tags
            sets["tags_from"] = change.tags_from
            conditions.append(Above("tags_from", change.tags_from))
        if not add and not sets and current:
            return None
        return Update(
            keys.job_pk(change.job_id),
            keys.rollup_sk(change.account),
            add=add,
            set=sets,
            set_if_absent={
                "job_id": change.job_id,
                "account": change.account,
                "kind": "rollup",
                "gsi_rollups_pk": keys.ROLLUPS,
                "gsi_rollups_sk": keys.rollup_index_sk(change.job_id, change.account),
            },
            conditions=conditions,
        )

    def remember(self, op: Update) -> None:
        from shared.adapters.table import apply_update

        key = (str(op.set_if_absent["job_id"]), str(op.set_if_absent["account"]))
        self._cache[key] = apply_update(self._cache.get(key) or None, op)

    def all(self) -> list[Item]:
        return list(self.table.query(keys.ROLLUPS, index=keys.ROLLUPS_INDEX))

    def of_job(self, job_id: str) -> list[Item]:
        return list(self.table.query(keys.job_pk(job_id), begins_with="R#"))


def rollup_accrual(item: Item) -> Accrual:
    return acc.from_attributes(item)


def json_default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, set):
        return sorted(value)
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(type(value))


def dump(item: Item) -> str:
    return json.dumps(item, default=json_default, sort_keys=True)


class UnitOfWork:
    """Operations of one event, written together (one transaction), and remembered by
    the stores once written."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.operations: list[Operation] = []

    def add(self, op: Operation | None) -> None:
        if op is not None:
            self.operations.append(op)

    def extend(self, ops: Sequence[Operation | None]) -> None:
        for op in ops:
            self.add(op)

    def commit(self) -> None:
        self.table.transact(self.operations)


# -- checkpoint objects --------------------------------------------------------------------


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

    def forget(self, job_id: str, account: str, bucket: str, key: str, step: str) -> None:
        self._heads.pop((job_id, account, bucket, key), None)
        self._steps.pop((job_id, step), None)

    def put_head(self, head: CheckpointHead, expected_version: int | None) -> Put:
        stored = head.model_copy(update={"version": (expected_version or 0) + 1})
        item: Item = {
            "pk": keys.job_pk(head.job_id),
            "sk": keys.checkpoint_head_sk(head.account, head.bucket, head.key),
            "kind": "checkpoint",
            "job_id": head.job_id,
            "account": head.account,
            "version": stored.version,
            "record": stored.model_dump_json(),
        }
        if head.rate is None:
            item["gsi_unpriced_pk"] = "UNPRICED"
            item["gsi_unpriced_sk"] = f"checkpoint#{head.account}#{head.bucket}/{head.key}"
        condition: Condition = Absent() if expected_version is None else VersionIs(expected_version)
        return Put(item, [condition])

    def remember(self, op: Put) -> None:
        head = checkpoint_of(op.item)
        self._heads[(head.job_id, head.account, head.bucket, head.key)] = head

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

    def step_marker(self, job_id: str, step: str, *, read: bool = True) -> Item | None:
        """The step's marker (cached); ``read=False`` as for ``head``."""
        cache_key = (job_id, step)
        if cache_key not in self._steps:
            if not read:
                return None
            self._steps[cache_key] = self.table.get(keys.job_pk(job_id), keys.step_sk(step)) or {}
        return self._steps[cache_key] or None

    def step_update(
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

    def remember_step(self, job_id: str, step: str, op: Update) -> None:
        from shared.adapters.table import apply_update

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

    def unmatched_objects(self) -> list[tuple[str, str]]:
        return [(str(i["bucket"]), str(i["key"])) for i in self.table.query("UNMATCHED")]


def checkpoint_of(item: Item) -> CheckpointHead:
    head = CheckpointHead.model_validate_json(item["record"])
    return head.model_copy(update={"version": int(item["version"])})
