"""S3 checkpoint writes and deletions into the job's ledger (one write per event).

Keys arrive URL-encoded; they are decoded before the job pattern is applied.
Objects in a checkpoint bucket that name no job are remembered in the
`unmatched` report, never dropped silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from urllib.parse import unquote_plus

from aws_lambda_powertools import Logger

from shared.clock import utc
from shared.ledger import VersionConflict
from shared.models import CheckpointObject, ObjectDelete, ObjectWrite
from shared.services.instance_state import MAX_ATTEMPTS, ConcurrentUpdates, LedgerDeps

logger = Logger(service="costtracker", child=True)


@dataclass(frozen=True)
class CheckpointOutcome:
    """``applied``, ``duplicate`` or ``unmatched``; ``orphan_delete`` for a deletion of an
    object whose write was never seen (yet)."""

    result: str
    bucket: str
    key: str
    job_id: str | None = None
    step: int | None = None
    orphan_delete: bool = False


def record_object_event(
    deps: LedgerDeps,
    *,
    event_id: str,
    at: datetime,
    region: str,
    bucket: str,
    raw_key: str,
    size_bytes: int | None,
    sequencer: str = "",
) -> CheckpointOutcome:
    """Apply an Object Created (``size_bytes`` given) or Object Deleted (None) event."""
    key = unquote_plus(raw_key)
    matched = deps.config.checkpoint.match(bucket, key)
    if matched is None:
        logger.warning(
            "object names no job: counted as unmatched",
            extra={"event_id": event_id, "bucket": bucket, "key": key},
        )
        deps.ledger.record_unmatched(bucket, key, event_id, utc(at))
        return CheckpointOutcome("unmatched", bucket, key)
    job_id, step = matched
    for _ in range(MAX_ATTEMPTS):
        current = deps.ledger.get_checkpoint(bucket, key)
        if current is None:
            obj = CheckpointObject(bucket=bucket, key=key, job_id=job_id, step=step, region=region)
            expected = None
        else:
            obj, expected = current, current.version
        seen = {w.event_id for w in obj.writes} | {d.event_id for d in obj.deletes}
        if event_id in seen:
            return CheckpointOutcome("duplicate", bucket, key, job_id, step)
        if size_bytes is None:
            obj = obj.model_copy(
                update={
                    "deletes": (
                        *obj.deletes,
                        ObjectDelete(event_id=event_id, at=utc(at), sequencer=sequencer),
                    )
                }
            )
        else:
            write = ObjectWrite(
                event_id=event_id, at=utc(at), size_bytes=size_bytes, sequencer=sequencer
            )
            obj = obj.model_copy(update={"writes": (*obj.writes, write)})
        if obj.rate is None:
            obj = obj.model_copy(update={"rate": deps.prices.s3_rate(region)})
        try:
            deps.ledger.save_checkpoint(obj, expected)
        except VersionConflict:
            continue
        orphan = size_bytes is None and not obj.writes
        if orphan:
            logger.warning(
                "deletion of a checkpoint object never seen written",
                extra={"event_id": event_id, "bucket": bucket, "key": key},
            )
        return CheckpointOutcome("applied", bucket, key, job_id, step, orphan)
    raise ConcurrentUpdates(f"s3://{bucket}/{key}")
