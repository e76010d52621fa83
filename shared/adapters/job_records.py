"""A job's partition, read and decoded: its heads, rollups, checkpoints, steps, training
jobs, measured totals and notices (one Query from ``F``), the reservations and file
systems its rollups name, and the sealed records of a window (one Query of ``E#``)."""

from __future__ import annotations

import json
from datetime import datetime

from shared.adapters import keys
from shared.adapters.checkpoint_store import STORED_UNTIL, checkpoint_of
from shared.adapters.file_system_store import file_system_of
from shared.adapters.instance_store import head_of
from shared.adapters.managed_store import reservation_of_item, training_of
from shared.adapters.rollup_store import RollupStore
from shared.adapters.table import Table
from shared.adapters.utilization_store import KIND as UTILIZATION_TOTAL
from shared.adapters.utilization_store import measured_total
from shared.domain.checkpoint import Version
from shared.domain.idle import IdleEpisode
from shared.domain.job import JobRecords, parse_time
from shared.domain.lifecycle import Notice
from shared.domain.segments import SegmentCost


def load_job(
    table: Table,
    rollups: RollupStore,
    job_id: str,
    *,
    since: datetime | None = None,
    full: bool = True,
    window: bool = False,
) -> JobRecords | None:
    """A job's records. ``full``: also every sealed record its cost questions need (rerun
    windows, spend at risk, and ``since`` on); otherwise heads and rollups only.
    ``window`` (a reader of the window from ``since`` on: a day's summary): sealed
    records from ``since`` only, and not the checkpoint heads of objects whose storage
    ended before (a long job's deleted objects outnumber its live ones)."""
    records = JobRecords(job_id=job_id)
    pk = keys.job_pk(job_id)
    keep = (STORED_UNTIL, keys.iso(since)) if window and since is not None else None
    for item in table.query(pk, sk_from="F", keep_from=keep):
        kind = item.get("kind")
        if kind == "rollup":
            records.rollups.append(item)
        elif kind == "instance":
            records.heads.append(head_of(item))
        elif kind == "checkpoint":
            records.checkpoints.append(checkpoint_of(item))
        elif kind == "step":
            records.steps.append(item)
        elif kind == "training":
            records.training.append(training_of(item))
        elif kind == UTILIZATION_TOTAL:  # what was measured of an instance (rule 10)
            instance, measured = measured_total(item)
            records.measured[instance] = measured
        elif kind == "notice":
            records.notices.append(
                (str(item["instance_id"]), Notice.model_validate_json(item["record"]))
            )
    if not records.rollups and not records.heads and not records.checkpoints:
        return None
    for rollup in records.rollups:  # the reservations charging this job unused time
        for ref in sorted(rollup.get("reservations", set()) or set()):
            account, _, reservation_id = str(ref).partition("#")
            found = table.get(*keys.reservation_key(account, reservation_id))
            if found is not None:
                records.reservations.append(reservation_of_item(found))
        for ref in sorted(rollup.get("file_systems", set()) or set()):  # FSx (rule 13)
            account, _, fs_id = str(ref).partition("#")
            fs_item = table.get(*keys.file_system_key(account, fs_id))
            if fs_item is not None:
                records.file_systems.append(file_system_of(fs_item))
    if not full:
        return records
    if window and since is not None:
        # What lies inside the window needs nothing older: a rerun window or an idle
        # episode that reaches into it belongs to a segment that ends in it or runs on.
        load_sealed(table, records, since)
        return records
    starts = [str(r["started_at"]) for r in records.rollups if r.get("started_at")]
    first = parse_time(min(starts)) if starts else None
    wanted: list[datetime | None] = [since]
    if records.notices:
        wanted.append(first)  # rerun windows may reach back to the job's start
    if any(h.open_segment is not None for h in records.heads):
        last = max((str(s.get("last_write", "")) for s in records.steps), default="")
        risk_from = parse_time(last) or first  # spend at risk: since the last checkpoint
        if risk_from is not None and not _heads_cover(records, risk_from):
            wanted.append(risk_from)
    bounds = [w for w in wanted if w is not None]
    if bounds:
        load_sealed(table, records, min(bounds))
    return records


def _heads_cover(records: JobRecords, since: datetime) -> bool:
    """Whether the heads' windows still hold every segment that ran after ``since``."""
    return all(h.floor is None or h.floor[0] <= since for h in records.heads)


def load_sealed(table: Table, records: JobRecords, since: datetime) -> None:
    """Sealed records (segments, versions, idle episodes) ending at or after ``since``."""
    pk = keys.job_pk(records.job_id)
    heads = {(c.account, f"s3://{c.bucket}/{c.key}"): c for c in records.checkpoints}
    for item in table.query(pk, sk_from=f"E#{keys.iso(since)}", sk_to="E#~"):
        if item.get("void"):
            continue
        kind = item.get("kind")
        if kind == "segment":
            records.segments.append(SegmentCost.model_validate_json(item["record"]))
            for raw in json.loads(str(item.get("idle", "[]"))):
                records.idle.append((str(item["instance_id"]), IdleEpisode.model_validate(raw)))
        elif kind == "version":
            head = heads.get((str(item.get("account", "")), str(item.get("object", ""))))
            records.versions.append((head, item, Version.model_validate_json(item["record"])))
        elif kind == "idle":
            records.idle.append(
                (str(item["instance_id"]), IdleEpisode.model_validate_json(item["record"]))
            )
    records.loaded_since = since
