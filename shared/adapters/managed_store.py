"""Stores of managed training heads (``JOB#<job>`` / ``H#T#<account>#<name>``) and capacity
reservation heads (``RES#<account>#<id>`` / ``HEAD``). As the other stores: a write is staged
into the event's unit of work, kept once written and forgotten on a conflict; every write is
guarded by a version."""

from __future__ import annotations

from functools import partial

from shared.adapters import keys
from shared.adapters import ledger_schema as schema
from shared.adapters.table import Absent, Condition, Item, Put, Table, VersionIs
from shared.adapters.unit_of_work import UnitOfWork
from shared.domain.index_facts import NOT_INDEXED, REFRESHED_RESERVATION, index_facts
from shared.domain.managed.reservation import ReservationHead
from shared.domain.managed.training import TrainingHead


class TrainingStore:
    def __init__(self, table: Table) -> None:
        self.table = table
        self._heads: dict[tuple[str, str, str], TrainingHead] = {}

    def head(self, job_id: str, account: str, name: str) -> TrainingHead | None:
        key = (job_id, account, name)
        if key not in self._heads:
            item = self.table.get(keys.job_pk(job_id), keys.training_head_sk(account, name))
            if item is None:
                return None
            self._heads[key] = training_of(item)
        return self._heads[key]

    def heads_of(self, job_id: str) -> list[TrainingHead]:
        """The job's training jobs (one Query of its partition's training heads)."""
        items = self.table.query(keys.job_pk(job_id), begins_with="H#T#")
        return [training_of(item) for item in items]

    def stage(self, uow: UnitOfWork, head: TrainingHead, expected_version: int | None) -> Put:
        """Write ``head`` if the stored one is still at ``expected_version`` (None: none yet)."""
        op = self._put(head, expected_version)
        key = (head.job_id, head.account, head.name)
        uow.add(op, on_commit=partial(self._remember, op), on_conflict=partial(self._forget, key))
        return op

    def _put(self, head: TrainingHead, expected_version: int | None) -> Put:
        stored = head.model_copy(update={"version": (expected_version or 0) + 1})
        condition: Condition = Absent() if expected_version is None else VersionIs(expected_version)
        item: Item = {
            "pk": keys.job_pk(head.job_id),
            "sk": keys.training_head_sk(head.account, head.name),
            "kind": "training",
            "job_id": head.job_id,
            "account": head.account,
            "version": stored.version,
            "record": stored.model_dump_json(),
        }
        item |= schema.index_entries(index_facts(head), f"{head.account}#{head.name}", "training")
        return Put(item, [condition])

    def _remember(self, op: Put) -> None:
        head = training_of(op.item)
        self._heads[(head.job_id, head.account, head.name)] = head

    def _forget(self, key: tuple[str, str, str]) -> None:
        self._heads.pop(key, None)


def training_of(item: Item) -> TrainingHead:
    head = TrainingHead.model_validate_json(str(item["record"]))
    return head.model_copy(update={"version": int(item["version"])})


class ReservationStore:
    def __init__(self, table: Table) -> None:
        self.table = table
        self._heads: dict[tuple[str, str], ReservationHead] = {}

    def head(self, account: str, reservation_id: str) -> ReservationHead | None:
        key = (account, reservation_id)
        if key not in self._heads:
            item = self.table.get(*keys.reservation_key(account, reservation_id))
            if item is None:
                return None
            self._heads[key] = reservation_of_item(item)
        return self._heads[key]

    def stage(
        self,
        uow: UnitOfWork,
        head: ReservationHead,
        expected_version: int | None,
        *,
        indexed: bool = True,
    ) -> Put:
        """Write ``head`` if the stored one is still at ``expected_version`` (None: none
        yet); ``indexed`` as for ``_put``."""
        op = self._put(head, expected_version, indexed=indexed)
        key = (head.account, head.reservation_id)
        uow.add(op, on_commit=partial(self._remember, op), on_conflict=partial(self._forget, key))
        return op

    def _put(
        self, head: ReservationHead, expected_version: int | None, *, indexed: bool = True
    ) -> Put:
        """The head's write; ``indexed``: the daily refresh still looks at it."""
        stored = head.model_copy(update={"version": (expected_version or 0) + 1})
        condition: Condition = Absent() if expected_version is None else VersionIs(expected_version)
        pk, sk = keys.reservation_key(head.account, head.reservation_id)
        item: Item = {
            "pk": pk,
            "sk": sk,
            "kind": "reservation",
            "job_id": head.job_id,
            "account": head.account,
            "version": stored.version,
            "record": stored.model_dump_json(),
        }
        # Refreshed daily while live and for a day after its end (the refresh drops it).
        facts = REFRESHED_RESERVATION if indexed else NOT_INDEXED
        item |= schema.index_entries(facts, f"{head.account}#{head.reservation_id}")
        return Put(item, [condition])

    def _remember(self, op: Put) -> None:
        head = reservation_of_item(op.item)
        self._heads[(head.account, head.reservation_id)] = head

    def _forget(self, key: tuple[str, str]) -> None:
        self._heads.pop(key, None)

    def refreshed(self) -> list[ReservationHead]:
        """The reservations the daily refresh looks at (sparse index, one Query)."""
        return [
            reservation_of_item(i)
            for i in self.table.query("RESERVATIONS", index=schema.OPEN_INDEX.name)
            if i.get("kind") == "reservation"
        ]


def reservation_of_item(item: Item) -> ReservationHead:
    head = ReservationHead.model_validate_json(str(item["record"]))
    return head.model_copy(update={"version": int(item["version"])})
