"""FSx for Lustre file systems in the job ledger (cost rule 13).

- Learnt from CloudTrail ``CreateFileSystem`` / ``UpdateFileSystem`` / ``DeleteFileSystem``
  calls (EventBridge "AWS API Call via CloudTrail", source ``aws.fsx``; a trail must be
  logging in that account and region for them to arrive) and from the daily
  DescribeFileSystems refresh, in each file system's own account and region.
- A file system belongs to the job named by its first job tag, else by the configured
  ``fsx.file_systems`` map; one with neither is left out (logged, never costed).
- Each change writes the head (``FSX#<account>#<id>``) and moves the job rollup's ``fsx``
  accrual by the difference, in one transaction; events come at least once and out of
  order: a repeated event id changes nothing, shapes are ordered by their own time, a
  deletion seen before its creation is kept on a head without a job until the creation
  names one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime

from shared.adapters.file_system_store import FileSystemStore
from shared.adapters.fsx import FileSystems
from shared.adapters.rollup_store import PAST_CHANGES, RollupChange
from shared.adapters.unit_of_work import UnitOfWork
from shared.domain.finance_day import calendar_of
from shared.domain.fsx import (
    FileSystemDescription,
    FileSystemFacts,
    FileSystemHead,
    Shape,
    apply_shape,
    fsx_accrual,
    price_key,
    remember_event,
)
from shared.domain.tags import grouping_tags
from shared.events.fsx import FsxApiCallEvent, created_facts, updated_values
from shared.services.deps import LedgerDeps
from shared.services.versioned import commit, versioned_update

logger = logging.getLogger("costtracker.file_systems")


@dataclass(frozen=True)
class FileSystemOutcome:
    """``applied``, ``duplicate``, ``untracked`` (no job: left out) or ``ignored`` (not a
    Lustre file system, a failed call)."""

    result: str
    file_system_id: str | None = None
    job_id: str | None = None

    def answer(self) -> dict[str, object]:
        return {"result": self.result, "file_system_id": self.file_system_id, "job": self.job_id}


@dataclass(frozen=True)
class PlaceRefresh:
    """What one (account, region) unit of the daily refresh did."""

    account: str
    region: str
    applied: int = 0
    failed: bool = False


class FileSystemLedger:
    """File system heads and their share of the job rollups."""

    def __init__(self, deps: LedgerDeps, store: FileSystemStore) -> None:
        self.deps = deps
        self.store = store

    # -- who pays, and at which rate ----------------------------------------------------------
    def job_of(self, facts: FileSystemFacts) -> str | None:
        for key in self.deps.config.tracking.job_tag_keys:
            if facts.tags.get(key):
                return facts.tags[key]
        return self.deps.config.fsx.file_systems.get(facts.file_system_id)

    def _repriced(self, head: FileSystemHead) -> FileSystemHead:
        """Each shape priced at the key in effect from it on (its tier may come from an
        earlier shape that arrived later); an unknown price stays None: unpriced."""
        shapes = []
        for shape, _, tier in head.effective():
            key = price_key(head.deployment_type, tier)
            if shape.rate is None or shape.price_key != key:
                rate = self.deps.prices.fsx_rate(head.region, key) if head.deployment_type else None
                if rate is None and head.deployment_type:
                    logger.warning(
                        "no price for an FSx for Lustre file system: unpriced",
                        extra={"file_system_id": head.file_system_id, "price_key": key},
                    )
                shape = shape.model_copy(update={"rate": rate, "price_key": key})
            shapes.append(shape)
        return head.model_copy(update={"shapes": tuple(shapes)})

    # -- events ---------------------------------------------------------------------------------
    def record_event(self, event: FsxApiCallEvent) -> FileSystemOutcome:
        record = event.detail
        if record.error_code:
            return FileSystemOutcome("ignored", record.file_system_id)
        if record.event_name == "CreateFileSystem":
            facts = created_facts(event)
            if facts is None:
                return FileSystemOutcome("ignored", record.file_system_id)
            return self._learn(facts, event.id, record.event_time)
        fs_id = record.file_system_id
        if fs_id is None:
            raise ValueError(f"{record.event_name} record without a file system id")
        account, region = event.account_id, event.region_name
        if record.event_name == "DeleteFileSystem":
            return self._change(account, region, fs_id, event.id, deleted_at=record.event_time)
        storage, throughput = updated_values(event)
        if storage is None and throughput is None:
            return FileSystemOutcome("ignored", fs_id)  # a change that is not billed
        return self._change(
            account,
            region,
            fs_id,
            event.id,
            update=(record.event_time, storage, throughput),
        )

    def _learn(self, facts: FileSystemFacts, source: str, at: datetime) -> FileSystemOutcome:
        job_id = self.job_of(facts)
        if job_id is None:
            logger.info(
                "file system carries no job tag: left out",
                extra={"file_system_id": facts.file_system_id, "account": facts.account},
            )
        created = facts.created_at or at

        def build(old: FileSystemHead | None) -> FileSystemHead | None:
            base = old or FileSystemHead(
                file_system_id=facts.file_system_id, account=facts.account, region=facts.region
            )
            if job_id is None and base.job_id is None:
                return None  # untagged: nothing is stored
            head = base.model_copy(
                update={
                    "job_id": base.job_id or job_id,
                    "deployment_type": facts.deployment_type,
                    "storage_type": facts.storage_type,
                    "drive_cache_type": facts.drive_cache_type,
                    "tags": facts.tags,
                    "created_at": min(created, base.created_at or created),
                }
            )
            shape = Shape(
                at=created,
                storage_gib=facts.storage_gib,
                throughput_mb_s_per_tib=facts.throughput_mb_s_per_tib,
                source=source,
            )
            return apply_shape(head, shape)

        return self._write(facts.account, facts.file_system_id, source, build, at)

    def _change(
        self,
        account: str,
        region: str,
        fs_id: str,
        source: str,
        *,
        deleted_at: datetime | None = None,
        update: tuple[datetime, int | None, int | None] | None = None,
    ) -> FileSystemOutcome:
        def build(old: FileSystemHead | None) -> FileSystemHead | None:
            head = old or FileSystemHead(file_system_id=fs_id, account=account, region=region)
            if deleted_at is not None:
                earliest = min(deleted_at, head.deleted_at or deleted_at)
                return head.model_copy(update={"deleted_at": earliest})
            assert update is not None
            at, storage, throughput = update
            shape = Shape(
                at=at, storage_gib=storage, throughput_mb_s_per_tib=throughput, source=source
            )
            return apply_shape(head, shape)

        at = deleted_at if deleted_at is not None else (update[0] if update else None)
        assert at is not None
        return self._write(account, fs_id, source, build, at)

    # -- the refresh ----------------------------------------------------------------------------
    def places_to_refresh(self, places: Iterable[tuple[str, str]] = ()) -> list[tuple[str, str]]:
        """The (account, region) units of a refresh: each that holds a live file system, and
        ``places`` (the tracker's own). Each unit is refreshed on its own
        (``refresh_place``), so a fan-out can give one unit to each worker."""
        live = {(h.account, h.region) for h in self.store.live()}
        return sorted(live | set(places))

    def refresh_place(
        self, source: FileSystems, account: str, region: str, now: datetime
    ) -> PlaceRefresh:
        """DescribeFileSystems in one account and region, through that account's client:
        new tagged file systems are learnt, changes and deletions no event told of applied.
        Only that place's file systems are touched: a file system missing from another
        place's answer is never taken as gone."""
        try:
            described = source.describe(account, region)
        except Exception as exc:  # a role that cannot be assumed, a region that is off
            logger.warning(
                "file systems could not be described: skipped until the next refresh",
                extra={"account": account, "region": region, "error": str(exc)},
            )
            return PlaceRefresh(account, region, failed=True)
        live = [h for h in self.store.live() if (h.account, h.region) == (account, region)]
        return PlaceRefresh(
            account, region, applied=self._apply_described(account, region, described, live, now)
        )

    def refresh(
        self, source: FileSystems, now: datetime, places: Iterable[tuple[str, str]] = ()
    ) -> dict[str, object]:
        """Every unit of ``places_to_refresh`` in turn. One place that fails is reported
        and never stops the others."""
        wanted = self.places_to_refresh(places)
        done = [self.refresh_place(source, account, region, now) for account, region in wanted]
        return {
            "places": len(wanted),
            "failed": [f"{d.account}/{d.region}" for d in done if d.failed],
            "applied": sum(d.applied for d in done),
        }

    def _apply_described(
        self,
        account: str,
        region: str,
        described: list[FileSystemDescription],
        live: list[FileSystemHead],
        now: datetime,
    ) -> int:
        applied = 0
        seen = set()
        stamp = f"refresh:{now.isoformat()}"
        for item in described:
            facts = item.facts
            seen.add(facts.file_system_id)
            try:
                known = self.store.head(account, facts.file_system_id)
                if known is None or known.created_at is None:
                    learnt = self._learn(facts, f"{stamp}:create", facts.created_at or now)
                    applied += learnt.result == "applied"
                head = self.store.head(account, facts.file_system_id)
                for at, storage, throughput in item.changes:
                    if head is not None and _told_by_event(head, storage, throughput):
                        continue  # an UpdateFileSystem event said so, at its own time
                    outcome = self._change(
                        account,
                        region,
                        facts.file_system_id,
                        f"refresh:{at.isoformat()}",
                        update=(at, storage, throughput),
                    )
                    applied += outcome.result == "applied"
                if item.deleted_at is not None and (head is None or head.deleted_at is None):
                    self._change(
                        account, region, facts.file_system_id, stamp, deleted_at=item.deleted_at
                    )
            except Exception as exc:  # one file system never stops the others
                logger.warning(
                    "file system refresh failed",
                    extra={"file_system_id": facts.file_system_id, "error": str(exc)},
                )
        for head in live:
            if (head.account, head.region) != (account, region) or head.file_system_id in seen:
                continue
            # Gone without a DeleteFileSystem the ledger saw: billed until this refresh.
            outcome = self._change(
                account, region, head.file_system_id, f"{stamp}:gone", deleted_at=now
            )
            applied += outcome.result == "applied"
        return applied

    # -- one write ------------------------------------------------------------------------------
    def _write(
        self,
        account: str,
        fs_id: str,
        source: str,
        make: Callable[[FileSystemHead | None], FileSystemHead | None],
        at: datetime,
    ) -> FileSystemOutcome:
        deps = self.deps

        def attempt(_: int) -> FileSystemOutcome:
            old = self.store.head(account, fs_id)
            if old is not None and source in old.seen:
                return FileSystemOutcome("duplicate", fs_id, old.job_id)
            new = make(old)
            if new is None:
                return FileSystemOutcome("untracked", fs_id)
            new = remember_event(self._repriced(new), source)
            uow = UnitOfWork(deps.table)
            self.store.stage(uow, new, old.version if old is not None else None)
            if new.job_id is not None:
                deps.rollups.stage(uow, self._rollup_change(old, new, at))
            commit(uow)
            return FileSystemOutcome("applied" if new.job_id else "untracked", fs_id, new.job_id)

        return versioned_update(attempt, fs_id)

    def _rollup_change(
        self, old: FileSystemHead | None, new: FileSystemHead, at: datetime
    ) -> RollupChange:
        assert new.job_id is not None
        delta = fsx_accrual(new)
        if old is not None and old.job_id == new.job_id:
            delta = delta.minus(fsx_accrual(old))
        change = RollupChange(job_id=new.job_id, account=new.account, delta=delta)
        change.add_strings["file_systems"] = {f"{new.account}#{new.file_system_id}"}
        sources = {s.rate.provenance for s in new.shapes if s.rate is not None}
        if sources:
            change.add_strings["price_sources"] = sources
        if new.created_at is not None:
            change.at_most["first_event_at"] = new.created_at.isoformat()
            tags = grouping_tags(new.tags, self.deps.config)
            if tags:  # a file system without grouping tags has no say on the job's
                change.tags = tags
                change.tags_from = (
                    f"{new.created_at.isoformat()}#{new.account}#{new.file_system_id}"
                )
                change.add_strings["tag_values"] = {f"{k}={v}" for k, v in tags.items()}
        change.at_least["last_event_at"] = max(at, new.deleted_at or at).isoformat()
        if at < calendar_of(self.deps.config).day_start(self.deps.clock.now()):
            change.counters["late_events"] = 1
            change.counters[PAST_CHANGES] = 1
        return change


def _told_by_event(head: FileSystemHead, storage: int | None, throughput: int | None) -> bool:
    """Whether an event (not a refresh) already gave the head this size and tier."""
    for shape in head.shapes:
        if shape.source.startswith("refresh:"):
            continue
        if storage is not None and shape.storage_gib != storage:
            continue
        if throughput is not None and shape.throughput_mb_s_per_tib != throughput:
            continue
        return True
    return False
