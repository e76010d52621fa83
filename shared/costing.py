"""Pure cost rules (SPEC "Cost rules"): Decimal money, the clock passed in.

Nothing here talks to AWS or reads the time: a segment's cost is a function
of its transitions, its rate steps and ``now``.
"""

from __future__ import annotations

import calendar
import itertools
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from shared.models import (
    CLOSING_STATES,
    InstanceCost,
    InstanceRecord,
    JobCost,
    PricedSegment,
    Rate,
    RateStep,
    Segment,
    SpotNotice,
    Transition,
    UnpricedItem,
)

MINIMUM_BILLED_SECONDS = 60
SECONDS_PER_HOUR = Decimal(3600)
# Same-second events are ordered along the EC2 lifecycle.
_STATE_RANK = {
    "pending": 0,
    "running": 1,
    "stopping": 2,
    "shutting-down": 2,
    "stopped": 3,
    "terminated": 4,
}


def whole_seconds(delta: timedelta) -> int:
    """Elapsed seconds, a started second counting whole (EC2 bills by the second)."""
    if delta <= timedelta(0):
        return 0
    return delta.days * 86400 + delta.seconds + (1 if delta.microseconds else 0)


def ordered(transitions: Iterable[Transition]) -> list[Transition]:
    """Transitions in event-time order (never arrival order), duplicates removed."""
    unique = {t.event_id: t for t in transitions}
    return sorted(unique.values(), key=lambda t: (t.at, _STATE_RANK[t.state], t.event_id))


def _hibernating(start: datetime, stop_at: datetime, notices: Sequence[SpotNotice]) -> bool:
    return any(n.action == "hibernate" and start <= n.at <= stop_at for n in notices)


def fold_segments(
    instance_id: str,
    transitions: Iterable[Transition],
    notices: Sequence[SpotNotice] = (),
) -> tuple[Segment, ...]:
    """Billed running segments: from a ``running`` to the next closing state (rule 1).

    A hibernating spot stop bills through ``stopping`` until ``stopped``. A
    second ``running`` while one is open, or a close with nothing open, adds
    nothing: duplicates and strays cannot double-count.
    """
    segments: list[Segment] = []
    open_start: Transition | None = None
    for t in ordered(transitions):
        if t.state == "running":
            if open_start is None:
                open_start = t
        elif t.state in CLOSING_STATES and open_start is not None:
            if t.state == "stopping" and _hibernating(open_start.at, t.at, notices):
                continue
            segments.append(
                Segment(
                    instance_id=instance_id,
                    start=open_start.at,
                    end=t.at,
                    start_event_id=open_start.event_id,
                    end_event_id=t.event_id,
                    end_state=t.state,
                )
            )
            open_start = None
    if open_start is not None:
        segments.append(
            Segment(
                instance_id=instance_id,
                start=open_start.at,
                end=None,
                start_event_id=open_start.event_id,
            )
        )
    return tuple(segments)


def billed_seconds(start: datetime, end: datetime, *, hourly: bool = False) -> int:
    """Seconds billed for a closed segment: per second with a 60 s minimum, or whole hours."""
    elapsed = whole_seconds(end - start)
    if hourly:
        hours = max(1, -(-elapsed // 3600))
        return hours * 3600
    return max(MINIMUM_BILLED_SECONDS, elapsed)


def _rate_at(steps: Sequence[RateStep], at: datetime) -> Rate:
    current = steps[0].rate
    for step in steps:
        if step.since <= at:
            current = step.rate
        else:
            break
    return current


def _integrate(
    steps: Sequence[RateStep], start: datetime, end: datetime
) -> tuple[Decimal, Decimal]:
    """(list, effective) USD of running from start to end under piecewise hourly rates."""
    ordered_steps = sorted(steps, key=lambda s: s.since)
    bounds = [start] + [s.since for s in ordered_steps if start < s.since < end] + [end]
    list_usd = Decimal(0)
    effective_usd = Decimal(0)
    for lo, hi in itertools.pairwise(bounds):
        seconds = Decimal(whole_seconds(hi - lo))
        rate = _rate_at(ordered_steps, lo)
        list_usd += seconds * rate.list_usd / SECONDS_PER_HOUR
        effective_usd += seconds * rate.effective_usd / SECONDS_PER_HOUR
    return list_usd, effective_usd


def price_segment(
    segment: Segment, steps: Sequence[RateStep], now: datetime, *, hourly: bool = False
) -> PricedSegment:
    """A segment's billed seconds and cost; an open one is accrued to ``now`` (rule 8)."""
    if segment.end is not None:
        seconds = billed_seconds(segment.start, segment.end, hourly=hourly)
        span_end = segment.end
    else:
        span_end = max(now, segment.start)
        seconds = whole_seconds(span_end - segment.start)
    if not steps:
        return PricedSegment(
            segment=segment, steps=(), billed_seconds=seconds, list_usd=None, effective_usd=None
        )
    ordered_steps = tuple(sorted(steps, key=lambda s: s.since))
    list_usd, effective_usd = _integrate(ordered_steps, segment.start, span_end)
    extra = seconds - whole_seconds(span_end - segment.start)
    if extra > 0:  # the minimum (or the started hour) is billed at the closing rate
        last = _rate_at(ordered_steps, span_end)
        list_usd += Decimal(extra) * last.list_usd / SECONDS_PER_HOUR
        effective_usd += Decimal(extra) * last.effective_usd / SECONDS_PER_HOUR
    return PricedSegment(
        segment=segment,
        steps=ordered_steps,
        billed_seconds=seconds,
        list_usd=list_usd,
        effective_usd=effective_usd,
    )


def month_start(at: datetime) -> datetime:
    return datetime(at.year, at.month, 1, tzinfo=UTC)


def next_month_start(at: datetime) -> datetime:
    days = calendar.monthrange(at.year, at.month)[1]
    return month_start(at) + timedelta(days=days)


def prorate_monthly(usd_per_month: Decimal, start: datetime, end: datetime) -> Decimal:
    """A monthly price accrued per second, each calendar month by its own length (rules 3, 4)."""
    total = Decimal(0)
    cursor = start
    while cursor < end:
        boundary = next_month_start(cursor)
        piece_end = min(end, boundary)
        month_seconds = Decimal((boundary - month_start(cursor)).days * 86400)
        total += usd_per_month * Decimal(whole_seconds(piece_end - cursor)) / month_seconds
        cursor = piece_end
    return total


def ebs_window(
    transitions: Iterable[Transition], now: datetime
) -> tuple[datetime, datetime] | None:
    """EBS accrues from the first ``running`` until ``terminated``, stopped time included."""
    ordered_transitions = ordered(transitions)
    first_running = next((t.at for t in ordered_transitions if t.state == "running"), None)
    if first_running is None:
        return None
    terminated = next(
        (t.at for t in ordered_transitions if t.state == "terminated" and t.at >= first_running),
        None,
    )
    end = terminated if terminated is not None else max(now, first_running)
    return first_running, end


def instance_cost(record: InstanceRecord, now: datetime) -> InstanceCost:
    """Everything one instance has cost up to ``now``."""
    profile = record.profile
    hourly = profile.hourly_billing
    priced = tuple(
        price_segment(seg, record.segment_rates.get(seg.start_event_id, ()), now, hourly=hourly)
        for seg in fold_segments(profile.instance_id, record.transitions, record.spot_notices)
    )
    unpriced: list[UnpricedItem] = []
    if any(not p.priced for p in priced):
        unpriced.append(
            UnpricedItem(
                kind="spot" if profile.lifecycle == "spot" else "ec2",
                key=profile.instance_type,
                region=profile.region,
                instance_id=profile.instance_id,
            )
        )
    ebs_usd = Decimal(0)
    window = ebs_window(record.transitions, now)
    if window is not None:
        for volume in profile.volumes:
            rate = record.volume_rates.get(volume.volume_type)
            if rate is None:
                unpriced.append(
                    UnpricedItem(
                        kind="ebs",
                        key=volume.volume_type,
                        region=profile.region,
                        instance_id=profile.instance_id,
                    )
                )
                continue
            ebs_usd += prorate_monthly(rate.effective_usd * volume.size_gib, *window)
    open_segment = next((p for p in priced if p.segment.end is None), None)
    burn = Decimal(0)
    if open_segment is not None and open_segment.steps:
        burn = _rate_at(open_segment.steps, now).effective_usd
    return InstanceCost(
        instance_id=profile.instance_id,
        instance_type=profile.instance_type,
        segments=priced,
        instance_list_usd=sum((p.list_usd or Decimal(0) for p in priced), Decimal(0)),
        instance_usd=sum((p.effective_usd or Decimal(0) for p in priced), Decimal(0)),
        ebs_usd=ebs_usd,
        billed_seconds=sum(p.billed_seconds for p in priced),
        running_since=open_segment.segment.start if open_segment else None,
        hourly_rate_usd=burn,
        unpriced=tuple(dict.fromkeys(unpriced)),
        terminated=any(t.state == "terminated" for t in record.transitions),
    )


def days_spanned(start: datetime, end: datetime) -> list[date]:
    """UTC dates a span touches, both ends included."""
    days = []
    day = start.astimezone(UTC).date()
    last = end.astimezone(UTC).date()
    while day <= last:
        days.append(day)
        day += timedelta(days=1)
    return days


# Charges the events cannot see, and how each will be confirmed (rule 7).
UNCONFIRMED_ITEMS: dict[str, str] = {
    "data_transfer": "Cost Explorer, grouped by the job tag, once the bill for the day is final",
    "cloudwatch": "Cost Explorer (AmazonCloudWatch) by tag, once the bill for the day is final",
}


def job_tags(
    records: Sequence[InstanceRecord], grouping_keys: Sequence[str]
) -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """A job's grouping tags: the first value seen (by first running) wins, conflicts kept."""

    def first_seen(record: InstanceRecord) -> tuple[datetime, str]:
        starts = [t.at for t in record.transitions if t.state == "running"]
        return (min(starts) if starts else datetime.max.replace(tzinfo=UTC), record.instance_id)

    tags: dict[str, str] = {}
    seen: dict[str, list[str]] = {}
    for record in sorted(records, key=first_seen):
        for key in grouping_keys:
            value = record.profile.tags.get(key)
            if value is None:
                continue
            tags.setdefault(key, value)
            values = seen.setdefault(key, [])
            if value not in values:
                values.append(value)
    conflicts = {k: tuple(v) for k, v in seen.items() if len(v) > 1}
    return tags, conflicts


def job_cost(
    job_id: str,
    records: Sequence[InstanceRecord],
    now: datetime,
    grouping_keys: Sequence[str],
) -> JobCost:
    """A job's cost accrued to ``now``: the sum of its instances (rule 8)."""
    instances = tuple(instance_cost(r, now) for r in sorted(records, key=lambda r: r.instance_id))
    tags, conflicts = job_tags(records, grouping_keys)
    unpriced = tuple(dict.fromkeys(u for i in instances for u in i.unpriced))
    if any(i.running_since is not None for i in instances):
        status = "running"
    elif instances and all(i.terminated for i in instances):
        status = "complete"
    else:
        status = "stopped"
    starts = [s.segment.start for i in instances for s in i.segments]
    sources = sorted(
        {
            f"{step.rate.source.value}:{step.rate.checked_on.isoformat()}"
            for i in instances
            for s in i.segments
            for step in s.steps
        }
        | {
            f"{rate.source.value}:{rate.checked_on.isoformat()}"
            for r in records
            for rate in r.volume_rates.values()
        }
    )
    unconfirmed = tuple(UNCONFIRMED_ITEMS) + tuple(
        sorted({f"unpriced:{u.kind}:{u.key}:{u.region}" for u in unpriced})
    )
    return JobCost(
        job_id=job_id,
        as_of=now,
        tags=tags,
        tag_conflicts=conflicts,
        status=status,
        instances=instances,
        instance_usd=sum((i.instance_usd for i in instances), Decimal(0)),
        instance_list_usd=sum((i.instance_list_usd for i in instances), Decimal(0)),
        ebs_usd=sum((i.ebs_usd for i in instances), Decimal(0)),
        checkpoint_storage_usd=Decimal(0),
        wasted_rerun_usd=Decimal(0),
        wasted_idle_usd=Decimal(0),
        burn_rate_usd_per_hour=sum((i.hourly_rate_usd for i in instances), Decimal(0)),
        billed_seconds=sum(i.billed_seconds for i in instances),
        started_at=min(starts) if starts else None,
        unconfirmed=unconfirmed,
        unpriced=unpriced,
        price_sources=tuple(sources),
    )
