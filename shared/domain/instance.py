"""An instance's head record: bounded, whatever its history (cost rules 1-3).

The head keeps what EC2 told us once (profile), the last ``WINDOW`` transitions
by event time (enough to place late and duplicate events), the fold state at
the window's floor, the priced segments of the window, and the fixed totals of
the segments that left it (each also kept as a sealed segment record). Its size
does not grow with the number of starts and stops.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Literal

from pydantic import Field

from shared.domain import accrual as acc
from shared.domain.accrual import Accrual
from shared.domain.base import Frozen
from shared.domain.ebs import Volume, VolumeRates, ebs_accrual
from shared.domain.idle import (
    MAX_ALARM_CHANGES,
    AlarmChange,
    IdleEpisode,
    episode_accrual,
    episodes,
    ordered_changes,
)
from shared.domain.lifecycle import (
    Fold,
    Notice,
    OpenSpan,
    OrderKey,
    Span,
    Transition,
    fold,
    fold_ordered,
    ordered,
)
from shared.domain.segments import (
    SegmentCost,
    SeriesReader,
    price_span,
    segment_accrual,
)

WINDOW = 24
MAX_NOTICES = 16
MAX_WARNINGS = 20
HOURLY_PLATFORMS: tuple[str, ...] = ("suse",)
Lifecycle = Literal["on-demand", "spot", "capacity-block"]


class InstanceProfile(Frozen):
    """What DescribeInstances told us once (or what the events say, when EC2 could not)."""

    instance_id: str
    instance_type: str
    region: str
    account: str = ""
    availability_zone: str = ""
    lifecycle: Lifecycle = "on-demand"
    platform: str = "Linux/UNIX"
    tags: dict[str, str] = Field(default_factory=dict)
    volumes: tuple[Volume, ...] = ()
    capacity_reservation_id: str = ""

    @property
    def hourly_billing(self) -> bool:
        return any(name in self.platform.lower() for name in HOURLY_PLATFORMS)

    def unpriced_key(self) -> str:
        kind = "spot" if self.lifecycle == "spot" else "ec2"
        return f"{kind}:{self.instance_type}:{self.region}"


class CostWarning(Frozen):
    """What a job's cost should be read with: a tag conflict or bad tag value, a profile
    inferred from events, an event after termination."""

    kind: str
    detail: str


class InstanceHead(Frozen):
    profile: InstanceProfile
    job_id: str
    # The profile came from the events alone (EC2 could not describe the instance).
    inferred: bool = False
    version: int = 0
    window: tuple[Transition, ...] = ()
    floor: OrderKey | None = None  # order key of the newest transition dropped from the window
    floor_open: OpenSpan | None = None
    floor_terminated: datetime | None = None  # a ``terminated`` below the floor
    terminated_at: datetime | None = None
    notices: tuple[Notice, ...] = ()
    segments: tuple[SegmentCost, ...] = ()
    # Fixed totals of the segments that left the window (accrual attributes).
    sealed: dict[str, Decimal] = Field(default_factory=dict)
    sealed_count: int = 0
    first_running_at: datetime | None = None
    last_running_at: datetime | None = None
    volume_rates: tuple[VolumeRates, ...] = ()
    interruptions: int = 0
    rebalances: int = 0
    last_warning_at: datetime | None = None
    warnings: tuple[CostWarning, ...] = ()
    # The tracker's own utilization alarms (recent changes) and the idle episodes of the
    # window's segments.
    alarms: tuple[AlarmChange, ...] = ()
    idle: tuple[IdleEpisode, ...] = ()

    @property
    def instance_id(self) -> str:
        return self.profile.instance_id

    @property
    def account(self) -> str:
        return self.profile.account

    @property
    def open_segment(self) -> SegmentCost | None:
        for segment in self.segments:  # a plain loop: asked of every head, often
            if segment.span.end is None:
                return segment
        return None

    @property
    def terminated(self) -> bool:
        return self.terminated_at is not None


@dataclass
class Change:
    """What applying an event did to a head: the new head and the segment records to
    write (new or changed closed segments) or to void (segments that no longer exist)."""

    head: InstanceHead
    write: list[SegmentCost] = field(default_factory=list)
    void: list[SegmentCost] = field(default_factory=list)
    warnings: list[CostWarning] = field(default_factory=list)
    # Interruption warnings to keep as records of their own (rerun windows read them).
    seal_notices: list[Notice] = field(default_factory=list)
    idle_write: list[IdleEpisode] = field(default_factory=list)
    idle_void: list[IdleEpisode] = field(default_factory=list)


def _add_warning(
    head_warnings: Sequence[CostWarning], new: Sequence[CostWarning]
) -> tuple[CostWarning, ...]:
    out = list(head_warnings)
    for w in new:
        if w not in out:
            out.append(w)
    return tuple(out[-MAX_WARNINGS:])


def refold(
    head: InstanceHead,
    window: Sequence[Transition],
    notices: Sequence[Notice],
    pin_for: Callable[[InstanceProfile, Span], object],
    series: SeriesReader | None,
    alarms: Sequence[AlarmChange] | None = None,
) -> Change:
    """Fold the window anew from its floor state and price what changed."""
    in_order = ordered(window)
    old = {s.span.key: s for s in head.segments}
    known = {key: s.span for key, s in old.items()}
    result = fold_ordered(in_order, notices, head.floor_open, head.floor_terminated, known)
    segments: list[SegmentCost] = []
    write: list[SegmentCost] = []
    for span in result.spans:
        previous = old.get(span.key)
        if previous is not None and (previous.span is span or previous.span == span):
            segments.append(previous)
            continue
        pin = previous.pin if previous is not None else pin_for(head.profile, span)
        cost = price_span(
            head.instance_id,
            span,
            pin,  # type: ignore[arg-type]
            series,
            hourly=head.profile.hourly_billing,
            unpriced_key=head.profile.unpriced_key(),
        )
        if (
            previous is not None
            and previous.record_end is not None
            and cost.span.end is not None
            and cost.span.end < previous.record_end
        ):
            cost = cost.model_copy(update={"key_end": previous.record_end})
        segments.append(cost)
        if cost.closed:
            write.append(cost)
    new_by_key = {s.span.key: s for s in segments}
    # A sealed record is keyed by (an upper bound of) its end: one whose end moved later,
    # that reopened or that no longer exists is voided at its old key; one whose end moved
    # earlier is rewritten at its old key.
    void = [
        s
        for k, s in old.items()
        if s.closed and (k not in new_by_key or new_by_key[k].record_end != s.record_end)
    ]
    warnings = [
        CostWarning(
            kind="event_after_terminated",
            detail=f"{t.state} at {t.at.isoformat()} ({t.event_id}) after {head.instance_id} "
            "was terminated: billed nothing",
        )
        for t in result.after_terminated
    ]
    alarm_changes = tuple(ordered_changes(head.alarms if alarms is None else alarms))
    new_idle = episodes(segments, alarm_changes, series)
    old_idle = {(e.segment_key, e.start): e for e in head.idle}
    idle_write = [
        e for e in new_idle if e.end is not None and old_idle.get((e.segment_key, e.start)) != e
    ]
    new_idle_by_key = {(e.segment_key, e.start): e for e in new_idle}
    idle_void = [
        e
        for k, e in old_idle.items()
        if e.end is not None and (k not in new_idle_by_key or new_idle_by_key[k].end != e.end)
    ]
    starts = [s.span.start for s in segments]
    first = min(
        [*starts, *([head.first_running_at] if head.first_running_at else [])], default=None
    )
    last = max([*starts, *([head.last_running_at] if head.last_running_at else [])], default=None)
    new_head = head.model_copy(
        update={
            "window": tuple(in_order),
            "notices": tuple(sorted(notices, key=lambda n: (n.at, n.event_id)))[-MAX_NOTICES:],
            "segments": tuple(segments),
            "terminated_at": result.terminated_at,
            "first_running_at": first,
            "last_running_at": last,
            "warnings": _add_warning(head.warnings, warnings),
            "alarms": alarm_changes[-MAX_ALARM_CHANGES:],
            "idle": new_idle,
        }
    )
    # A closed segment's record carries its idle episodes: rewrite it when they change.
    touched = {e.segment_key for e in [*idle_write, *idle_void]}
    written = {c.span.key for c in write}
    for cost in segments:
        if cost.closed and cost.span.key in touched and cost.span.key not in written:
            write.append(cost)
    change = Change(new_head, write, void, warnings, idle_write=idle_write, idle_void=idle_void)
    return _slide(change)


def _slide(change: Change) -> Change:
    """Keep the window bounded: the oldest transitions move below the floor; segments
    that closed before the new floor leave the head (their sealed records stay)."""
    head = change.head
    if len(head.window) <= WINDOW:
        return change
    window = list(head.window)
    dropped, kept = window[: len(window) - WINDOW], window[len(window) - WINDOW :]
    # The window is in order (``refold`` made it so): so is its oldest part. Only the
    # fold's end state is kept: its spans are the head's own (known), none made anew.
    known = {s.span.key: s.span for s in head.segments}
    below = fold_ordered(dropped, head.notices, head.floor_open, head.floor_terminated, known)
    floor = dropped[-1].order
    keep_keys = {t.event_id for t in kept}
    if below.open is not None:
        keep_keys.add(below.open.start_event_id)
    sealed = acc.from_attributes(head.sealed)  # a new accrual (see ``head_accrual``)
    remaining: list[SegmentCost] = []
    moved = 0
    gone: set[str] = set()
    for seg in head.segments:
        if seg.closed and seg.span.end_event_id not in keep_keys and seg.span.key not in keep_keys:
            sealed.add(segment_accrual(seg))
            gone.add(seg.span.key)
            moved += 1
        else:
            remaining.append(seg)
    idle = []
    for episode in head.idle:
        if episode.segment_key in gone:
            sealed.add(episode_accrual(episode))
        else:
            idle.append(episode)
    earliest = min((s.span.start for s in remaining), default=None)
    alarms = tuple(a for a in head.alarms if earliest is None or a.at >= earliest)
    change.head = head.model_copy(
        update={
            "window": tuple(kept),
            "floor": floor,
            "floor_open": below.open,
            "floor_terminated": below.terminated_at or head.floor_terminated,
            "segments": tuple(remaining),
            "sealed": acc.to_attributes(sealed),
            "sealed_count": head.sealed_count + moved,
            "idle": tuple(idle),
            "alarms": alarms,
        }
    )
    return change


def fold_with(head: InstanceHead, transition: Transition) -> Fold:
    """The head's window folded with one more transition, from the window's floor (its
    spans are the head's own where they are unchanged)."""
    return fold(
        (*head.window, transition),
        head.notices,
        head.floor_open,
        head.floor_terminated,
        {s.span.key: s.span for s in head.segments},
    )


def is_very_late(head: InstanceHead, transition: Transition) -> bool:
    return head.floor is not None and transition.order <= head.floor


def seen(head: InstanceHead, event_id: str) -> bool:
    for records in (head.window, head.notices, head.alarms):
        for record in records:
            if record.event_id == event_id:
                return True
    return False


def head_accrual(head: InstanceHead) -> Accrual:
    """Everything the instance contributes to its job (idle comes from ``idle``)."""
    # ``from_attributes`` makes a new accrual (each term zero plus its value): adding it
    # to an empty one would only copy it, term for term, to the same numbers.
    out = acc.from_attributes(head.sealed)
    for seg in head.segments:
        out.add(segment_accrual(seg))
    for episode in head.idle:
        out.add(episode_accrual(episode))
    out.add(ebs_accrual(head))
    out.fixed("n_instances", "s", 1, 1)
    if head.open_segment is not None:
        out.fixed("n_running", "s", 1, 1)
    if head.terminated:
        out.fixed("n_terminated", "s", 1, 1)
    if head.interruptions:
        out.fixed("n_interruptions", "s", 1, head.interruptions)
    if head.rebalances:
        out.fixed("n_rebalances", "s", 1, head.rebalances)
    return out
