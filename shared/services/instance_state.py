"""EC2 state changes into the ledger: at most two writes per event.

Write 1 is the instance record (versioned, so concurrent events retry rather
than overwrite); write 2 marks the job active on the event's day. A duplicate
event writes nothing; an out-of-order one is folded in by its own time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta

from shared.clock import Clock, utc
from shared.config import LedgerConfig
from shared.costing import days_spanned, fold_segments
from shared.inventory import Inventory
from shared.ledger import Ledger, VersionConflict
from shared.models import (
    CLOSING_STATES,
    InstanceProfile,
    InstanceRecord,
    Segment,
    SpotNotice,
    Transition,
)
from shared.pricing import PriceBook

MAX_ATTEMPTS = 5
BILLING_STATES = CLOSING_STATES | {"running"}


class ConcurrentUpdates(Exception):
    """The instance record kept changing under us; the event is retried by Lambda."""


@dataclass
class LedgerDeps:
    ledger: Ledger
    inventory: Inventory
    prices: PriceBook
    clock: Clock
    config: LedgerConfig


@dataclass(frozen=True)
class Outcome:
    """What an event did: ``applied``, ``duplicate``, ``untracked`` or ``ignored``."""

    result: str
    instance_id: str
    job_id: str | None = None
    days_touched: tuple[str, ...] = field(default=())


def new_record(deps: LedgerDeps, profile: InstanceProfile) -> InstanceRecord | None:
    """A first-seen instance's record with its job; None when it is not tracked."""
    region = profile.region
    job_id = deps.config.tracking.job_of(profile.instance_id, profile.instance_type, profile.tags)
    if job_id is None:
        return None
    volume_rates = {}
    for volume_type in sorted({v.volume_type for v in profile.volumes}):
        rate = deps.prices.volume_rate(region, volume_type)
        if rate is not None:
            volume_rates[volume_type] = rate
    return InstanceRecord(profile=profile, job_id=job_id, volume_rates=volume_rates)


def price_segments(record: InstanceRecord, prices: PriceBook, now: datetime) -> InstanceRecord:
    """Give every segment without rates its rate steps (spot: again once it has closed)."""
    rates = dict(record.segment_rates)
    final = set(record.final_rates)
    for segment in fold_segments(record.instance_id, record.transitions, record.spot_notices):
        key = segment.start_event_id
        if key in rates and (key in final or segment.end is None):
            continue
        if key in rates and record.profile.lifecycle != "spot":
            final.add(key)
            continue
        steps = prices.instance_steps(record.profile, segment.start, segment.end, now)
        if steps:
            rates[key] = steps
            if segment.end is not None:
                final.add(key)
    return record.model_copy(update={"segment_rates": rates, "final_rates": frozenset(final)})


def _midnights_between(after: datetime, until: datetime) -> Iterable[date]:
    """UTC dates whose midnight falls in (after, until]: the day boundaries in between."""
    day = after.date() + timedelta(days=1)
    while datetime.combine(day, time(0), tzinfo=UTC) <= until:
        yield day
        day += timedelta(days=1)


def days_to_mark(
    record: InstanceRecord, segment: Segment | None, event_day: date, now: datetime
) -> set[date]:
    """Days this event must mark its job active on.

    The event's own day, plus days of its segment that no day-boundary run can
    have marked: a boundary marks jobs whose segment was open in the ledger
    when it ran, i.e. days whose midnight came after the segment was first seen.
    """
    days = {event_day}
    if segment is not None:
        seen = record.segment_seen_at.get(segment.start_event_id, now)
        covered = set(_midnights_between(seen, now))
        span = days_spanned(segment.start, segment.end or max(now, segment.start))
        days |= {d for d in span if d not in covered}
    return {d for d in days if d.isoformat() not in record.days_touched}


def apply_transition(
    record: InstanceRecord, transition: Transition, now: datetime
) -> tuple[InstanceRecord, Segment | None]:
    """The record with one more transition, and the segment that transition starts or ends."""
    transitions = (*record.transitions, transition)
    segments = fold_segments(record.instance_id, transitions, record.spot_notices)
    touched = next(
        (s for s in segments if transition.event_id in (s.start_event_id, s.end_event_id)),
        None,
    )
    seen = dict(record.segment_seen_at)
    for s in segments:
        seen.setdefault(s.start_event_id, now)
    updated = record.model_copy(update={"transitions": transitions, "segment_seen_at": seen})
    return updated, touched


def record_state_change(
    deps: LedgerDeps, *, event_id: str, at: datetime, instance_id: str, state: str, region: str
) -> Outcome:
    """Apply one EC2 state change to the instance's record and mark its job's day."""
    if state not in BILLING_STATES:
        return Outcome("ignored", instance_id)  # `pending` opens nothing: no read, no write
    transition = Transition(event_id=event_id, at=utc(at), state=state)

    def change(record: InstanceRecord, now: datetime) -> tuple[InstanceRecord, set[date]]:
        updated, segment = apply_transition(record, transition, now)
        return updated, days_to_mark(updated, segment, transition.at.date(), now)

    return update_instance(deps, instance_id, region, event_id, change)[0]


def record_spot_notice(
    deps: LedgerDeps, *, event_id: str, at: datetime, instance_id: str, action: str, region: str
) -> Outcome:
    """Keep a spot interruption warning (or rebalance recommendation) on the instance.

    One write: the record. A hibernate warning changes how the record's segments fold
    (billed through ``stopping`` until ``stopped``), so segments are re-derived.
    """
    notice = SpotNotice(event_id=event_id, at=utc(at), action=action)

    def change(record: InstanceRecord, now: datetime) -> tuple[InstanceRecord, set[date]]:
        return record.model_copy(update={"spot_notices": (*record.spot_notices, notice)}), set()

    return update_instance(deps, instance_id, region, event_id, change)[0]


Change = Callable[[InstanceRecord, datetime], tuple[InstanceRecord, set[date]]]


def update_instance(
    deps: LedgerDeps, instance_id: str, region: str, event_id: str, change: Change
) -> tuple[Outcome, InstanceRecord | None]:
    """Read (or describe and create) the record, apply one change, save under its version.

    Returns the outcome and the saved record (None when nothing was saved)."""
    now = deps.clock.now()
    for _ in range(MAX_ATTEMPTS):
        current = deps.ledger.get_instance(instance_id)
        if current == "untracked":
            return Outcome("untracked", instance_id), None
        if current is None:
            profile = deps.inventory.describe(instance_id, region)
            created = new_record(deps, profile)
            if created is None:
                deps.ledger.mark_untracked(instance_id, profile.instance_type, now)
                return Outcome("untracked", instance_id), None
            record, expected = created, None
        else:
            assert isinstance(current, InstanceRecord)
            record, expected = current, current.version
        seen = (
            {t.event_id for t in record.transitions}
            | {n.event_id for n in record.spot_notices}
            | {a.event_id for a in record.alarm_transitions}
        )
        if event_id in seen:
            return Outcome("duplicate", instance_id, record.job_id), None
        updated, days = change(record, now)
        updated = price_segments(updated, deps.prices, now)
        updated = updated.model_copy(
            update={"days_touched": updated.days_touched | {d.isoformat() for d in days}}
        )
        try:
            deps.ledger.save_instance(updated, expected)
        except VersionConflict:
            continue
        if days:
            tags = {
                k: v
                for k, v in updated.profile.tags.items()
                if k in deps.config.tracking.grouping_tag_keys
            }
            deps.ledger.touch_job_days(updated.job_id, sorted(days), tags)
        outcome = Outcome(
            "applied", instance_id, updated.job_id, tuple(d.isoformat() for d in sorted(days))
        )
        return outcome, updated
    raise ConcurrentUpdates(instance_id)
