"""S3 checkpoint writes and deletions into the job's ledger: one transaction per event
(object head, the version it ended, the step's marker, the job's rollup).

Keys arrive URL-encoded; they are decoded before the job pattern is applied.
Objects in a checkpoint bucket that name no job are kept in the ``unmatched``
report, never dropped. A checkpoint of a job with no instance makes a job with
storage cost only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import unquote_plus

from shared.adapters.checkpoint_store import CheckpointStore
from shared.adapters.rollup_store import PAST_CHANGES, RollupChange
from shared.adapters.unit_of_work import UnitOfWork
from shared.domain.checkpoint import (
    MAX_STEP_DIGITS,
    CheckpointHead,
    ObjectEvent,
    apply_object_event,
    bounded_step,
    is_very_late,
    object_accrual,
    seen,
)
from shared.domain.clock import day_start, utc
from shared.services.deps import LedgerDeps
from shared.services.versioned import commit, versioned_update

logger = logging.getLogger("costtracker.checkpoints")


@dataclass(frozen=True)
class CheckpointOutcome:
    """``applied``, ``duplicate``, ``unmatched`` or ``ignored``; ``orphan_delete`` for a
    deletion of an object whose write was never seen (yet)."""

    result: str
    bucket: str
    key: str
    job_id: str | None = None
    step: int | None = None
    orphan_delete: bool = False

    def answer(self) -> dict[str, object]:
        """The fields by name, as ``dataclasses.asdict`` gives them (every field is a
        plain value: nothing to copy deeply)."""
        return dict(vars(self))


def record_object_event(
    deps: LedgerDeps,
    store: CheckpointStore,
    *,
    event_id: str,
    at: datetime,
    region: str,
    account: str,
    bucket: str,
    raw_key: str,
    size_bytes: int | None,
    sequencer: str = "",
    on_complete: Callable[[str, datetime], object] | None = None,
) -> CheckpointOutcome:
    """Apply an Object Created (``size_bytes`` given) or Object Deleted (None) event;
    ``on_complete(job, moment)`` is told when the write completes a checkpoint (its
    step's marker) or would, quiet from then on (no marker configured)."""
    key = unquote_plus(raw_key)
    config = deps.config.checkpoint
    matched = config.match(bucket, key)
    at = utc(at)
    if matched is None:
        logger.warning(
            "object names no job: counted as unmatched",
            extra={"event_id": event_id, "bucket": bucket, "key": key},
        )
        store.record_unmatched(bucket, key, event_id, at)
        return CheckpointOutcome("unmatched", bucket, key)
    job_id, written_step = matched
    step = bounded_step(written_step)
    if step is None and written_step:
        logger.warning(
            f"checkpoint step of {len(written_step)} characters set aside (at most "
            f"{MAX_STEP_DIGITS} digits): the object counts without a step",
            extra={"event_id": event_id, "bucket": bucket, "key": key},
        )
    marker = bool(config.completion_marker) and key.rsplit("/", 1)[-1] == config.completion_marker
    event = ObjectEvent(event_id=event_id, at=at, size_bytes=size_bytes, sequencer=sequencer)
    is_write = event.is_write
    late = at < day_start(deps.clock.now())  # applied after the day it happened on
    at_iso = at.isoformat()

    # A write most often creates a new object (a new shard, a new step): try that
    # without reading; the Absent conditions turn a wrong guess into one retry with reads.
    def attempt(n: int) -> CheckpointOutcome:
        optimistic = is_write and n == 0
        current = store.head(job_id, account, bucket, key, read=not optimistic)
        if current is None:
            head = CheckpointHead(
                bucket=bucket,
                key=key,
                job_id=job_id,
                account=account,
                region=region,
                step=step,
                marker=marker,
                rate=deps.prices.s3_rate(region),
            )
            expected = None
        else:
            head, expected = current, current.version
        if seen(head, event_id):
            return CheckpointOutcome("duplicate", bucket, key, job_id, step)
        if is_very_late(head, event):
            logger.warning(
                "object event older than every event kept for the object: not billed",
                extra={"event_id": event_id, "bucket": bucket, "key": key},
            )
            return CheckpointOutcome("ignored", bucket, key, job_id, step)
        change = apply_object_event(head, event)
        uow = UnitOfWork(deps.table)
        store.stage_head(uow, change.head, expected)
        for version in change.write:
            uow.add(store.sealed_version(change.head, version))
        for version in change.void:
            uow.add(store.sealed_version(change.head, version, void=True))
        step_key = head.step_key
        counted = False
        if is_write:
            new_step = store.step_marker(job_id, step_key, read=not optimistic) is None
            store.stage_step(
                uow,
                job_id,
                step_key,
                at_iso,
                new_object=current is None,
                complete_at=at_iso if marker else None,
                read=not optimistic,
            )
            counted = marker if config.completion_marker else new_step
        delta = object_accrual(change.head)
        if current is not None:
            delta = delta.minus(object_accrual(current))
        rollup = RollupChange(job_id=job_id, account=account, delta=delta)
        if counted:
            rollup.counters["checkpoints"] = 1
        if is_write:
            rollup.at_least["last_checkpoint_at"] = at_iso
            if step is not None:
                rollup.at_least["last_checkpoint_step"] = f"{step:020d}"
        rollup.at_least["last_event_at"] = at_iso
        rollup.at_most["first_event_at"] = at_iso
        if head.rate is not None:
            rollup.add_strings["price_sources"] = {head.rate.provenance}
        if late:
            rollup.counters["late_events"] = 1
            rollup.counters[PAST_CHANGES] = 1
        deps.rollups.stage(uow, rollup)
        commit(uow)
        orphan = size_bytes is None and change.head.writes == 0
        if orphan:
            logger.warning(
                "deletion of a checkpoint object never seen written",
                extra={"event_id": event_id, "bucket": bucket, "key": key},
            )
        return CheckpointOutcome("applied", bucket, key, job_id, step, orphan)

    outcome = versioned_update(attempt, f"s3://{bucket}/{key}")
    if on_complete is not None and outcome.result == "applied" and is_write:
        if marker:
            on_complete(job_id, at)
        elif not config.completion_marker:
            on_complete(job_id, at + timedelta(minutes=config.quiet_minutes))
    return outcome
