"""Checkpoint objects (cost rule 4): storage accrues per second over calendar months,
from a write until the object is overwritten or deleted (or now).

An object's head keeps its current version and its last few events (to order
late and duplicate writes and deletes by time, then S3's sequencer); versions
that ended are sealed records, and their cost is a fixed total on the head. The
head does not grow with overwrites.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from pydantic import Field

from shared.domain import accrual as acc
from shared.domain.accrual import Accrual
from shared.domain.base import Frozen, Rate
from shared.domain.clock import MONTH_UNITS, month_clock
from shared.domain.segments import unpriced_component

GIB = 2**30
WINDOW = 8


# A step of at most 18 digits: its pace (steps per hour) stays within the precision money
# is formatted with; a longer one (any writer of the bucket can make one) is set aside.
MAX_STEP_DIGITS = 18


def bounded_step(written: str | None) -> int | None:
    """A checkpoint key's step: ASCII digits only, at most ``MAX_STEP_DIGITS`` of them;
    anything else is no step."""
    if written and written.isascii() and written.isdigit() and len(written) <= MAX_STEP_DIGITS:
        return int(written)
    return None


class ObjectEvent(Frozen):
    """A write (``size_bytes`` set) or a deletion of the object."""

    event_id: str
    at: datetime
    size_bytes: int | None = Field(default=None, ge=0)
    sequencer: str = ""

    @property
    def is_write(self) -> bool:
        return self.size_bytes is not None

    @property
    def order(self) -> tuple[datetime, int, str]:
        return event_order(self)


def event_order(event: ObjectEvent) -> tuple[datetime, int, str]:
    """``ObjectEvent.order`` as a plain function (the sort key, without a property call)."""
    return (event.at, _sequencer(event.sequencer), event.event_id)


def _sequencer(value: str) -> int:
    """S3 sequencers compare as hex numbers once right-padded to equal length."""
    return int(value.ljust(32, "0")[:32], 16) if value else 0


class Version(Frozen):
    """A stored version's life: ``end`` None while it is the object's current one."""

    write_event_id: str
    start: datetime
    end: datetime | None
    size_bytes: int
    end_event_id: str | None = None


class CheckpointHead(Frozen):
    bucket: str
    key: str
    job_id: str
    account: str = ""
    region: str
    step: int | None = None
    marker: bool = False  # the completion marker object of its step
    version: int = 0
    window: tuple[ObjectEvent, ...] = ()
    floor: tuple[datetime, int, str] | None = None
    floor_version: Version | None = None  # the version open at the floor
    versions: tuple[Version, ...] = ()  # versions from the window's events (and the floor's)
    sealed: dict[str, Decimal] = Field(default_factory=dict)
    sealed_count: int = 0
    writes: int = 0
    rate: Rate | None = None

    @property
    def current(self) -> Version | None:
        return next((v for v in self.versions if v.end is None), None)

    @property
    def stored_until(self) -> datetime | None:
        """When the object's last stored version ended: None while a version is stored
        (or before any event). Versions sealed off the head ended by its floor. A window
        that opens after this time holds none of the object's storage."""
        ends = [v.end for v in self.versions]
        if None in ends or (not ends and self.floor is None):
            return None
        known = [e for e in ends if e is not None]
        if self.floor is not None:
            known.append(self.floor[0])
        return max(known)

    @property
    def step_key(self) -> str:
        return str(self.step) if self.step is not None else f"{self.bucket}/{self.key}"


def fold_versions(events: Sequence[ObjectEvent], start: Version | None) -> tuple[Version, ...]:
    """Versions from events in order: a write opens one (ending the previous), a
    deletion ends the open one."""
    versions: list[Version] = []
    current = start
    for event in sorted({e.event_id: e for e in events}.values(), key=event_order):
        if current is not None:
            versions.append(
                current.model_copy(update={"end": event.at, "end_event_id": event.event_id})
            )
            current = None
        if event.size_bytes is not None:
            current = Version(
                write_event_id=event.event_id, start=event.at, end=None, size_bytes=event.size_bytes
            )
    if current is not None:
        versions.append(current)
    return tuple(versions)


@dataclass(frozen=True)
class ObjectChange:
    """What an event does to an object: its head after the event, at the head's next
    version (as it is written), and the ended versions to seal or void."""

    head: CheckpointHead
    write: tuple[Version, ...] = ()  # ended versions, new or changed
    void: tuple[Version, ...] = ()


def apply_object_event(head: CheckpointHead, event: ObjectEvent) -> ObjectChange:
    window = [*head.window, event]
    versions = fold_versions(window, head.floor_version)
    old = {v.write_event_id: v for v in head.versions}
    write = tuple(
        v for v in versions if v.end is not None and _changed(old.get(v.write_event_id), v)
    )
    new_by_key = {v.write_event_id: v for v in versions}
    void = tuple(
        v
        for k, v in old.items()
        if v.end is not None and (k not in new_by_key or new_by_key[k].end != v.end)
    )
    updated = head.model_copy(
        update={
            "window": tuple(sorted(window, key=event_order)),
            "versions": versions,
            "writes": head.writes + (1 if event.is_write else 0),
            "version": head.version + 1,
        }
    )
    return ObjectChange(head=_slide(updated), write=write, void=void)


def _changed(before: Version | None, after: Version) -> bool:
    """``before != after``, told by the end first (what an event most often changes)."""
    return before is None or before.end != after.end or before != after


def _slide(head: CheckpointHead) -> CheckpointHead:
    if len(head.window) <= WINDOW:
        return head
    dropped, kept = (
        head.window[: len(head.window) - WINDOW],
        head.window[len(head.window) - WINDOW :],
    )
    kept_ids = {e.event_id for e in kept}
    sealed = acc.from_attributes(head.sealed)
    remaining = []
    moved = 0
    floor_version = head.floor_version
    for version in head.versions:
        ends_below = version.end_event_id is not None and version.end_event_id not in kept_ids
        if version.write_event_id not in kept_ids and ends_below:
            sealed.add(version_accrual(head, version))
            moved += 1
        else:
            remaining.append(version)
            if version.write_event_id not in kept_ids:
                floor_version = version.model_copy(update={"end": None, "end_event_id": None})
    if all(v.write_event_id in kept_ids for v in remaining):
        floor_version = None
    return head.model_copy(
        update={
            "window": tuple(kept),
            "floor": dropped[-1].order,
            "floor_version": floor_version,
            "versions": tuple(remaining),
            "sealed": acc.to_attributes(sealed),
            "sealed_count": head.sealed_count + moved,
        }
    )


def version_accrual(head: CheckpointHead, version: Version) -> Accrual:
    out = Accrual()
    if head.rate is None:
        out.fixed(unpriced_component(f"s3:standard:{head.region}"), "s", 1, 1)
        return out
    weight = head.rate.effective_usd * version.size_bytes
    denom = MONTH_UNITS * GIB
    begin = month_clock(version.start)
    if version.end is not None:
        out.fixed(acc.STORAGE, acc.MONTH_CLOCK, denom, weight * (month_clock(version.end) - begin))
    else:
        out.linear(acc.STORAGE, acc.MONTH_CLOCK, denom, weight, begin)
    return out


def object_accrual(head: CheckpointHead) -> Accrual:
    out = Accrual()
    if head.sealed:  # what versions sealed off the head cost
        out.add(acc.from_attributes(head.sealed))
    for version in head.versions:
        out.add(version_accrual(head, version))
    out.fixed("n_objects", "s", 1, 1)
    return out


def is_very_late(head: CheckpointHead, event: ObjectEvent) -> bool:
    return head.floor is not None and event.order <= head.floor


def seen(head: CheckpointHead, event_id: str) -> bool:
    return any(e.event_id == event_id for e in head.window)
