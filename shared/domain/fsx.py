"""FSx for Lustre file systems and their cost (cost rule 13). Pure.

A file system that carries a job tag (or whose id is configured for a job) accrues its
storage GB x $/GB-month, prorated per second over calendar months like an EBS volume,
from its creation until its deletion, as the job's ``fsx`` charge. Its price depends on
its deployment type and throughput tier: the price key is ``<DEPLOYMENT_TYPE>_<MB/s per
TiB>`` (``PERSISTENT_2_125``, ``PERSISTENT_1_200``, HDD ``PERSISTENT_1_12``) or the
deployment type alone for scratch file systems (``SCRATCH_2``).

The head keeps the file system's shapes: each says, from its moment on, how large it was
and at which tier (a ``CreateFileSystem``, each ``UpdateFileSystem`` that changed storage
or throughput, what the daily refresh found), each with its rate (None: unpriced, named
``fsx:<key>:<region>``, never 0). Intelligent-Tiering storage, the SSD read cache of an
HDD file system and backups are listed as ``unconfirmed`` (the bill says what they cost).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from pydantic import Field

from shared.domain import accrual as acc
from shared.domain.accrual import Accrual
from shared.domain.base import Frozen, Rate
from shared.domain.clock import MONTH_UNITS, month_clock, seconds_clock, whole_seconds
from shared.domain.segments import unpriced_component

N_FILE_SYSTEMS = "n_file_systems"
# Seconds a file system of the job has lived: open while it lives, so that a job whose
# only file system is unpriced still counts as accruing on each day it lives.
FSX_SECONDS = "fsx_seconds"
SCRATCH_TYPES = ("SCRATCH_1", "SCRATCH_2")
# Shapes a head keeps; older ones are folded into a fixed amount (an update can come every
# six hours at most, so this is weeks of changes).
MAX_SHAPES = 32
# Listed on every job with a file system: priced by the bill, not by events.
UNCONFIRMED_BACKUPS = "unconfirmed:fsx_backups"


def price_key(deployment_type: str, throughput_mb_s_per_tib: int | None) -> str:
    """``PERSISTENT_2_125``; ``SCRATCH_2`` alone; a persistent type without a tier is just
    its type (no price has that key: unpriced)."""
    if deployment_type in SCRATCH_TYPES or throughput_mb_s_per_tib is None:
        return deployment_type
    return f"{deployment_type}_{throughput_mb_s_per_tib}"


class Shape(Frozen):
    """What one event said of the file system from ``at`` on: its size and/or its tier
    (None: unchanged, carried from the shape before, so an update that arrives before its
    file system's creation is still read right), and the rate of the price key in effect
    (``price_key``)."""

    at: datetime
    storage_gib: int | None = Field(default=None, ge=0)
    throughput_mb_s_per_tib: int | None = None
    source: str  # the event id or "refresh:<time>" that said so
    rate: Rate | None = None
    price_key: str = ""


class Piece(Frozen):
    """A stretch of the file system's life at one size and tier."""

    shape: Shape
    storage_gib: int
    throughput_mb_s_per_tib: int | None
    start: datetime
    end: datetime | None  # None: the current stretch of a live file system


class FileSystemFacts(Frozen):
    """What CreateFileSystem or DescribeFileSystems says of a Lustre file system."""

    file_system_id: str = Field(pattern=r"^fs-[0-9a-f]{8,17}$")
    account: str
    region: str
    deployment_type: str
    storage_type: str = "SSD"
    drive_cache_type: str | None = None
    storage_gib: int = Field(ge=0)
    throughput_mb_s_per_tib: int | None = None
    tags: dict[str, str] = Field(default_factory=dict)
    created_at: datetime | None = None

    @property
    def price_key(self) -> str:
        return price_key(self.deployment_type, self.throughput_mb_s_per_tib)


class FileSystemHead(Frozen):
    file_system_id: str
    account: str
    region: str
    # None: seen only through an update or deletion so far (a create, tagged, may follow).
    job_id: str | None = None
    deployment_type: str = ""
    storage_type: str = "SSD"
    drive_cache_type: str | None = None
    tags: dict[str, str] = Field(default_factory=dict)
    created_at: datetime | None = None
    deleted_at: datetime | None = None
    shapes: tuple[Shape, ...] = ()
    seen: tuple[str, ...] = ()  # the last event ids applied (duplicates)
    # Shapes folded off the head: their fixed cost up to ``folded_until``.
    folded_usd: Decimal = Decimal(0)
    folded_until: datetime | None = None
    version: int = 0

    @property
    def arn(self) -> str:
        return f"arn:aws:fsx:{self.region}:{self.account}:file-system/{self.file_system_id}"

    def effective(self) -> list[tuple[Shape, int, int | None]]:
        """Each shape in time order with the size and tier in effect from it on."""
        out: list[tuple[Shape, int, int | None]] = []
        storage, tier = 0, None
        for shape in sorted(self.shapes, key=lambda s: (s.at, s.source)):
            storage = shape.storage_gib if shape.storage_gib is not None else storage
            if shape.throughput_mb_s_per_tib is not None:
                tier = shape.throughput_mb_s_per_tib
            out.append((shape, storage, tier))
        return out

    def pieces(self) -> list[Piece]:
        """The stretches of the file system's life, from its creation to its deletion."""
        if self.created_at is None:
            return []
        out: list[Piece] = []
        shapes = self.effective()
        for n, (shape, storage, tier) in enumerate(shapes):
            start = max(shape.at, self.created_at)
            nxt = shapes[n + 1][0].at if n + 1 < len(shapes) else None
            end = nxt if nxt is not None else self.deleted_at
            if end is not None and self.deleted_at is not None:
                end = min(end, self.deleted_at)
            if end is not None and end <= start:
                continue
            out.append(Piece(shape=shape, storage_gib=storage, throughput_mb_s_per_tib=tier,
                             start=start, end=end))  # fmt: skip
        return out

    def unconfirmed(self) -> list[str]:
        notes = [UNCONFIRMED_BACKUPS]
        if self.storage_type == "INTELLIGENT_TIERING":
            notes.append(f"unconfirmed:fsx_intelligent_tiering:{self.file_system_id}")
        if self.storage_type == "HDD" and self.drive_cache_type not in (None, "NONE"):
            notes.append(f"unconfirmed:fsx_ssd_cache:{self.file_system_id}")
        return notes


def _tiered(head: FileSystemHead) -> bool:
    """Intelligent-Tiering is billed per tier used: no single $/GB-month (unconfirmed)."""
    return head.storage_type == "INTELLIGENT_TIERING"


def fsx_accrual(head: FileSystemHead) -> Accrual:
    """What the file system accrues on its job's rollup: each priced shape's GB x rate
    over calendar months, linear while it is the current one; unpriced keys named."""
    out = Accrual()
    if head.job_id is None or head.created_at is None:
        return out
    out.fixed(N_FILE_SYSTEMS, acc.SECONDS_CLOCK, 1, 1)
    if head.deleted_at is None:
        out.linear(FSX_SECONDS, acc.SECONDS_CLOCK, 1, 1, seconds_clock(head.created_at))
    else:
        out.fixed(
            FSX_SECONDS, acc.SECONDS_CLOCK, 1, whole_seconds(head.created_at, head.deleted_at)
        )
    for note in head.unconfirmed():
        out.fixed(note, acc.SECONDS_CLOCK, 1, 1)
    if head.folded_usd:
        out.fixed(acc.FSX, acc.MONTH_CLOCK, MONTH_UNITS, head.folded_usd * MONTH_UNITS)
    if _tiered(head):
        return out
    unpriced = set()
    for piece in head.pieces():
        rate = piece.shape.rate
        if rate is None:
            key = price_key(head.deployment_type, piece.throughput_mb_s_per_tib)
            unpriced.add(unpriced_component(f"fsx:{key}:{head.region}"))
            continue
        weight = rate.effective_usd * piece.storage_gib
        if not weight:
            continue
        begin = month_clock(piece.start)
        if piece.end is None:
            out.linear(acc.FSX, acc.MONTH_CLOCK, MONTH_UNITS, weight, begin)
        else:
            units = month_clock(piece.end) - begin
            out.fixed(acc.FSX, acc.MONTH_CLOCK, MONTH_UNITS, weight * units)
    for component in sorted(unpriced):
        out.fixed(component, acc.SECONDS_CLOCK, 1, 1)
    return out


def fsx_between(
    head: FileSystemHead, lo: datetime, hi: datetime, now: datetime
) -> tuple[Decimal, bool]:
    """(cost inside (lo, hi], every shape in it priced?) accrued to ``now``."""
    total = Decimal(0)
    priced = True
    hi = min(hi, now)
    if head.job_id is None or _tiered(head) or hi <= lo:
        return total, priced
    for piece in head.pieces():
        a, b = max(lo, piece.start), min(hi, piece.end or now)
        if b <= a:
            continue
        if piece.shape.rate is None:
            priced = False
            continue
        units = month_clock(b) - month_clock(a)
        total += piece.shape.rate.effective_usd * piece.storage_gib * units / MONTH_UNITS
    return total, priced


def apply_shape(head: FileSystemHead, shape: Shape) -> FileSystemHead:
    """The head with a shape added (one per moment and source), the oldest folded past
    ``MAX_SHAPES``."""
    kept = {(s.at, s.source): s for s in head.shapes}
    kept[(shape.at, shape.source)] = shape
    shapes = sorted(kept.values(), key=lambda s: (s.at, s.source))
    folded_usd, folded_until = head.folded_usd, head.folded_until
    while len(shapes) > MAX_SHAPES and head.created_at is not None:
        first, second = shapes[0], shapes[1]
        if first.rate is None or first.storage_gib is None:  # kept until priced / known
            break
        start = max(first.at, head.created_at)
        if second.at > start:
            units = month_clock(second.at) - month_clock(start)
            folded_usd += first.rate.effective_usd * first.storage_gib * units / MONTH_UNITS
        # The next shape inherits what the folded one said.
        carried = second.model_copy(
            update={
                "storage_gib": second.storage_gib
                if second.storage_gib is not None
                else first.storage_gib,
                "throughput_mb_s_per_tib": second.throughput_mb_s_per_tib
                if second.throughput_mb_s_per_tib is not None
                else first.throughput_mb_s_per_tib,
            }
        )
        folded_until = second.at
        shapes = [carried, *shapes[2:]]
    return head.model_copy(
        update={"shapes": tuple(shapes), "folded_usd": folded_usd, "folded_until": folded_until}
    )


def remember_event(head: FileSystemHead, event_id: str) -> FileSystemHead:
    return head.model_copy(update={"seen": (*head.seen, event_id)[-16:]})


class FileSystemDescription(Frozen):
    """What DescribeFileSystems answers of one Lustre file system: its facts, and the
    storage or throughput changes its administrative actions name (with their request
    time); ``deleted_at`` only where the source knows it (replay's scenario)."""

    facts: FileSystemFacts
    changes: tuple[tuple[datetime, int | None, int | None], ...] = ()
    deleted_at: datetime | None = None
