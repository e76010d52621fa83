"""Instance pointers (which job an instance belongs to), instance heads and their
sealed segments and notices (keys in ``shared.adapters.keys``).

A write is staged into the event's unit of work (``stage_*``) with what this store keeps
once it lands (a warm Lambda container or the replay reuses it without a read) and
forgets when its condition fails; every write is guarded by a version or a condition,
so a stale copy only costs a retry, never a lost update. Index entries come from
``index_facts``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from functools import partial

from shared.adapters import keys
from shared.adapters import ledger_schema as schema
from shared.adapters.table import Absent, Condition, Item, Put, Table, VersionIs
from shared.adapters.unit_of_work import UnitOfWork
from shared.domain.accrual import Accrual
from shared.domain.index_facts import NOT_INDEXED, index_facts
from shared.domain.instance import InstanceHead
from shared.domain.lifecycle import Notice
from shared.domain.segments import SegmentCost


@dataclass(frozen=True)
class SealedSegment:
    """A sealed segment record: its cost, and whose it is (the head it left)."""

    cost: SegmentCost
    account: str
    instance_id: str
    partition: str  # its job's partition, where that head is


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

    def _put_pointer(self, pointer: Pointer, expires_at: int | None = None) -> Put:
        pk, sk = keys.pointer(pointer.account, pointer.instance_id)
        item: Item = {"pk": pk, "sk": sk, "kind": "pointer", "job_id": pointer.job_id or ""}
        if expires_at is not None:
            item["expires_at"] = expires_at
        return Put(item, [Absent()])

    def stage_pointer(
        self, uow: UnitOfWork, pointer: Pointer, expires_at: int | None = None
    ) -> Put:
        """Write the pointer once (it is kept when written; on a conflict another event
        wrote it first, and the next read finds theirs)."""
        op = self._put_pointer(pointer, expires_at)
        uow.add(
            op,
            on_commit=partial(self._keep_pointer, pointer),
            on_conflict=partial(self._drop_pointer, pointer),
        )
        return op

    def _keep_pointer(self, pointer: Pointer) -> None:
        self._pointers[(pointer.account, pointer.instance_id)] = pointer

    def _drop_pointer(self, pointer: Pointer) -> None:
        self._pointers.pop((pointer.account, pointer.instance_id), None)

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

    def _forget(self, job_id: str, account: str, instance_id: str) -> None:
        """Drop the head (and its accrual) and the pointer that led to it."""
        head = self._heads.pop((job_id, account, instance_id), None)
        if head is not None:
            self._accruals.pop(id(head), None)
        self._pointers.pop((account, instance_id), None)

    def _put_head(self, stored: InstanceHead, expected_version: int | None) -> Put:
        condition: Condition = Absent() if expected_version is None else VersionIs(expected_version)
        return Put(head_item(stored), [condition])

    def stage_head(
        self,
        uow: UnitOfWork,
        head: InstanceHead,
        expected_version: int | None,
        accrual: Accrual | None = None,
    ) -> Put:
        """Write ``head`` if the stored one is still at ``expected_version`` (None: none
        yet); once written it is kept (with ``accrual``, its accrual if known), and on a
        conflict the head and pointer read are forgotten."""
        stored = head.model_copy(update={"version": (expected_version or 0) + 1})
        op = self._put_head(stored, expected_version)
        uow.add(
            op,
            on_commit=partial(self._remember, stored, accrual),
            on_conflict=partial(self._forget, head.job_id, head.account, head.instance_id),
        )
        return op

    def _remember(self, stored: InstanceHead, accrual: Accrual | None) -> None:
        """Keep what was written (``stored``: the very record written, saving a parse)."""
        self._hold(stored)
        if accrual is not None:
            self._accruals[id(stored)] = accrual

    def _hold(self, head: InstanceHead) -> None:
        """Hold ``head`` in place of the copy held before (and that copy's accrual)."""
        key = (head.job_id, head.account, head.instance_id)
        previous = self._heads.get(key)
        if previous is not None:
            self._accruals.pop(id(previous), None)
        self._heads[key] = head

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
        facts = NOT_INDEXED if void else index_facts(cost)
        item |= schema.index_entries(facts, f"{head.account}#{head.instance_id}", "segment")
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

    def sealed_segments(self, head: InstanceHead, since: datetime) -> list[SegmentCost]:
        """The instance's sealed segments (not voided) ending at or after ``since``, read
        from the table (one Query of the job's sealed records)."""
        items = self.table.query(
            keys.job_pk(head.job_id), sk_from=f"E#{keys.iso(since)}", sk_to="E#~"
        )
        return [
            SegmentCost.model_validate_json(item["record"])
            for item in items
            if item.get("kind") == "segment"
            and not item.get("void")
            and item.get("instance_id") == head.instance_id
            and item.get("account") == head.account
        ]

    def stored_head_of(self, sealed: SealedSegment) -> InstanceHead | None:
        """The head of the instance a sealed segment record belongs to, as the table
        holds it (not this store's cache)."""
        item = self.table.get(
            sealed.partition, keys.instance_head_sk(sealed.account, sealed.instance_id)
        )
        return None if item is None else head_of(item)

    def open_heads(self, account: str = "") -> Iterator[InstanceHead]:
        """Heads with a running segment (the sweeps'), of one account if given (its
        range of the open-index: a sweep unit reads its account's, not the fleet's)."""
        return self._swept("OPEN", f"{account}#" if account else None)

    def _swept(self, sweep: str, begins_with: str | None = None) -> Iterator[InstanceHead]:
        """The index gives keys and versions only; a head this store holds at that
        version is used as it is, the others are read in batches of 100. A warm container
        (and the replay, where every handler shares the store) reads a few bytes per
        head instead of whole heads every hour; a cold one makes one more call per 100
        heads."""
        listed = [
            ((item["job_id"], item["account"], item["instance_id"]), int(item["version"]))
            for item in self.table.query(
                sweep,
                index=schema.OPEN_INDEX.name,
                attributes=_SWEPT_ATTRIBUTES,
                begins_with=begins_with,
            )
            if item.get("kind") == "instance"
        ]
        stale = [key for key, version in listed if self._cached_version(key) != version]
        if stale:
            for item in self.table.batch_get(
                [(keys.job_pk(j), keys.instance_head_sk(a, i)) for j, a, i in stale]
            ):
                self._keep(head_of(item))
        for key, _version in listed:
            if key in self._heads:
                yield self._heads[key]

    def _cached_version(self, key: tuple[str, str, str]) -> int | None:
        cached = self._heads.get(key)
        return cached.version if cached is not None else None

    def _keep(self, head: InstanceHead) -> None:
        """Hold a head read from the table unless a newer one is already held."""
        held = self._cached_version((head.job_id, head.account, head.instance_id))
        if held is None or held < head.version:
            self._hold(head)


_SWEPT_ATTRIBUTES = ("kind", "job_id", "account", "instance_id", "version")


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
    item |= schema.index_entries(
        index_facts(head), f"{head.account}#{head.instance_id}", "instance"
    )
    return item


def head_of(item: Item) -> InstanceHead:
    head = InstanceHead.model_validate_json(item["record"])
    return head.model_copy(update={"version": int(item["version"])})


def sealed_of(item: Item) -> SealedSegment:
    return SealedSegment(
        cost=SegmentCost.model_validate_json(str(item["record"])),
        account=str(item["account"]),
        instance_id=str(item["instance_id"]),
        partition=str(item["pk"]),
    )
