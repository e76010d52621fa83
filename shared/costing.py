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
    CheckpointObject,
    InstanceCost,
    InstanceRecord,
    JobCost,
    PricedSegment,
    Rate,
    RateStep,
    Segment,
    SpotNotice,
    StoredSpan,
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


def exact_seconds(delta: timedelta) -> Decimal:
    return Decimal(delta.days * 86400 + delta.seconds) + Decimal(delta.microseconds) / 10**6


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
    exact_total = Decimal(0)
    for lo, hi in itertools.pairwise(bounds):
        seconds = exact_seconds(hi - lo)  # pieces are exact: the whole is rounded once
        exact_total += seconds
        rate = _rate_at(ordered_steps, lo)
        list_usd += seconds * rate.list_usd / SECONDS_PER_HOUR
        effective_usd += seconds * rate.effective_usd / SECONDS_PER_HOUR
    started = Decimal(whole_seconds(end - start)) - exact_total
    if started > 0:  # the started second, at the rate in effect at the end
        last = _rate_at(ordered_steps, end)
        list_usd += started * last.list_usd / SECONDS_PER_HOUR
        effective_usd += started * last.effective_usd / SECONDS_PER_HOUR
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
    cursor, end = start.astimezone(UTC), end.astimezone(UTC)
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


def accrues_ebs(record: InstanceRecord) -> bool:
    """Has volumes that ran and are not terminated: they cost even while stopped."""
    return (
        bool(record.profile.volumes)
        and any(t.state == "running" for t in record.transitions)
        and not any(t.state == "terminated" for t in record.transitions)
    )


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


GIB = Decimal(2**30)  # AWS bills storage "GB" as 2^30 bytes


def _sequencer(value: str) -> int:
    """S3 sequencers compare as hex numbers once right-padded to equal length."""
    return int(value.ljust(32, "0")[:32], 16) if value else 0


def object_spans(obj: CheckpointObject) -> tuple[StoredSpan, ...]:
    """Lifetimes of an object's versions: a write opens one (ending the previous),
    a deletion ends the open one. Ordered by event time, then S3's sequencer."""
    changes = sorted(
        [(w.at, _sequencer(w.sequencer), 0, w.size_bytes) for w in obj.writes]
        + [(d.at, _sequencer(d.sequencer), 1, 0) for d in obj.deletes]
    )
    spans: list[StoredSpan] = []
    open_at: datetime | None = None
    open_size = 0
    for at, _, kind, size in changes:
        if open_at is not None:
            spans.append(StoredSpan(start=open_at, end=at, size_bytes=open_size))
            open_at = None
        if kind == 0:
            open_at, open_size = at, size
    if open_at is not None:
        spans.append(StoredSpan(start=open_at, end=None, size_bytes=open_size))
    return tuple(spans)


def checkpoint_storage_cost(obj: CheckpointObject, now: datetime) -> Decimal | None:
    """Rule 4: size x $/GB-month, per second over calendar months, write to delete (or now).
    None when the S3 price is unknown."""
    if obj.rate is None:
        return None if obj.writes else Decimal(0)
    total = Decimal(0)
    for span in object_spans(obj):
        end = span.end if span.end is not None else max(now, span.start)
        monthly = obj.rate.effective_usd * Decimal(span.size_bytes) / GIB
        total += prorate_monthly(monthly, span.start, end)
    return total


def merge_windows(windows: Iterable[tuple[datetime, datetime]]) -> list[tuple[datetime, datetime]]:
    merged: list[tuple[datetime, datetime]] = []
    for start, end in sorted(w for w in windows if w[0] < w[1]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def cost_inside(
    instances: Sequence[InstanceCost], windows: Sequence[tuple[datetime, datetime]], now: datetime
) -> Decimal:
    """Effective cost of the instances' running time inside the windows (a portion of it)."""
    total = Decimal(0)
    for instance in instances:
        for priced in instance.segments:
            if not priced.steps:
                continue
            seg_end = priced.segment.end if priced.segment.end is not None else now
            for lo, hi in windows:
                start, end = max(priced.segment.start, lo), min(seg_end, hi)
                if start < end:
                    total += _integrate(priced.steps, start, end)[1]
    return total


def _checkpoint_times(checkpoints: Sequence[CheckpointObject]) -> list[tuple[datetime, int | None]]:
    """(time, step) of each checkpoint: a step's shards complete at its latest write."""
    by_step: dict[object, datetime] = {}
    for obj in checkpoints:
        for write in obj.writes:
            key: object = obj.step if obj.step is not None else (obj.bucket, obj.key)
            by_step[key] = max(by_step.get(key, write.at), write.at)
    return sorted((at, key if isinstance(key, int) else None) for key, at in by_step.items())


def rerun_windows(
    records: Sequence[InstanceRecord],
    checkpoints: Sequence[CheckpointObject],
    job_start: datetime | None,
    now: datetime,
) -> tuple[list[tuple[datetime, datetime]], int]:
    """Rule 5: per interruption warning, [last checkpoint write before it (job start if
    none), end of the interrupted segment]; merged so no second is counted twice.
    Returns the windows and the number of interruptions."""
    writes = sorted(w.at for obj in checkpoints for w in obj.writes)
    windows = []
    interruptions = 0
    for record in records:
        segments = fold_segments(record.instance_id, record.transitions, record.spot_notices)
        for notice in record.spot_notices:
            if not notice.is_interruption:
                continue
            interruptions += 1
            segment = next(
                (
                    s
                    for s in segments
                    if s.start <= notice.at and (s.end is None or notice.at <= s.end)
                ),
                None,
            )
            if segment is None:
                continue  # a warning for an instance not running: nothing billed to lose
            before = [at for at in writes if at <= notice.at]
            start = before[-1] if before else (job_start or segment.start)
            windows.append((start, segment.end if segment.end is not None else now))
    return merge_windows(windows), interruptions


def job_cost(
    job_id: str,
    records: Sequence[InstanceRecord],
    now: datetime,
    grouping_keys: Sequence[str],
    checkpoints: Sequence[CheckpointObject] = (),
    tokens_per_step_tag: str = "tokens-per-step",
) -> JobCost:
    """A job's cost accrued to ``now``: the sum of its instances and checkpoints (rule 8),
    with rerun waste (rule 5) shown beside it, never added to the total."""
    instances = tuple(instance_cost(r, now) for r in sorted(records, key=lambda r: r.instance_id))
    tags, conflicts = job_tags(records, grouping_keys)
    unpriced = list(dict.fromkeys(u for i in instances for u in i.unpriced))
    starts = [s.segment.start for i in instances for s in i.segments]
    started_at = min(starts) if starts else None

    storage = Decimal(0)
    for obj in checkpoints:
        cost = checkpoint_storage_cost(obj, now)
        if cost is None:
            unpriced.append(
                UnpricedItem(kind="s3", key="standard", region=obj.region, instance_id="")
            )
        else:
            storage += cost

    windows, interruptions = rerun_windows(records, checkpoints, started_at, now)
    wasted_rerun = cost_inside(instances, windows, now)
    wasted_idle = Decimal(0)
    idle_seconds = 0
    costs_by_id = {i.instance_id: i for i in instances}
    for record in records:
        idle = idle_windows(record, now)
        instance = costs_by_id[record.instance_id]
        wasted_idle += cost_inside([instance], idle, now)
        idle_seconds += _seconds_inside(instance, idle, now)
    busy_at = first_busy_at(records)
    warmup_seconds = warmup_usd = None
    if busy_at is not None and started_at is not None and busy_at >= started_at:
        warmup_seconds = whole_seconds(busy_at - started_at)
        warmup_usd = cost_inside(instances, [(started_at, busy_at)], now)
    rebalances = sum(1 for r in records for n in r.spot_notices if not n.is_interruption)

    marks = _checkpoint_times(checkpoints)
    last_checkpoint_at = marks[-1][0] if marks else None
    risk_from = last_checkpoint_at or started_at
    spend_at_risk = cost_inside(instances, [(risk_from, now)], now) if risk_from else Decimal(0)

    last_warning = max(
        (n.at for r in records for n in r.spot_notices if n.is_interruption), default=None
    )
    restarted = last_warning is not None and any(
        t.state == "running" and t.at > last_warning for r in records for t in r.transitions
    )
    if last_warning is not None and not restarted:
        status = "interrupted"
    elif any(i.running_since is not None for i in instances):
        status = "running"
    elif instances and all(i.terminated for i in instances):
        status = "complete"
    else:
        status = "stopped"

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
        | {f"{o.rate.source.value}:{o.rate.checked_on.isoformat()}" for o in checkpoints if o.rate}
    )
    unpriced_tuple = tuple(dict.fromkeys(unpriced))
    unconfirmed = tuple(UNCONFIRMED_ITEMS) + tuple(
        sorted({f"unpriced:{u.kind}:{u.key}:{u.region}" for u in unpriced_tuple})
    )
    instance_usd = sum((i.instance_usd for i in instances), Decimal(0))
    ebs_usd = sum((i.ebs_usd for i in instances), Decimal(0))
    total = instance_usd + ebs_usd + storage

    steps = [step for _, step in marks if step is not None]
    max_step = max(steps, default=None)
    cost_per_1k = total * 1000 / max_step if max_step else None
    steps_per_hour = None
    stepped = [(at, step) for at, step in marks if step is not None]
    if len(stepped) >= 2 and stepped[-1][0] > stepped[0][0]:
        hours = Decimal(whole_seconds(stepped[-1][0] - stepped[0][0])) / SECONDS_PER_HOUR
        steps_per_hour = Decimal(stepped[-1][1] - stepped[0][1]) / hours
    cadence = None
    if len(marks) >= 2:
        cadence = whole_seconds(marks[-1][0] - marks[0][0]) // (len(marks) - 1)
    tokens = _tokens_per_step(records, tokens_per_step_tag)
    per_million = total * 1_000_000 / (max_step * tokens) if max_step and tokens else None

    return JobCost(
        job_id=job_id,
        as_of=now,
        tags=tags,
        tag_conflicts=conflicts,
        status=status,
        instances=instances,
        instance_usd=instance_usd,
        instance_list_usd=sum((i.instance_list_usd for i in instances), Decimal(0)),
        ebs_usd=ebs_usd,
        checkpoint_storage_usd=storage,
        wasted_rerun_usd=wasted_rerun,
        wasted_idle_usd=wasted_idle,
        burn_rate_usd_per_hour=sum((i.hourly_rate_usd for i in instances), Decimal(0)),
        billed_seconds=sum(i.billed_seconds for i in instances),
        started_at=started_at,
        idle_seconds=idle_seconds,
        warmup_seconds=warmup_seconds,
        warmup_usd=warmup_usd,
        unconfirmed=unconfirmed,
        unpriced=unpriced_tuple,
        price_sources=tuple(sources),
        checkpoints=len(marks),
        checkpoint_objects=len(checkpoints),
        last_checkpoint_at=last_checkpoint_at,
        last_checkpoint_step=max_step,
        interruptions=interruptions,
        rebalance_recommendations=rebalances,
        spend_at_risk_usd=spend_at_risk,
        cost_per_1k_steps_usd=cost_per_1k,
        steps_per_hour=steps_per_hour,
        cost_per_million_tokens_usd=per_million,
        checkpoint_cadence_seconds=cadence,
    )


def _seconds_inside(instance: InstanceCost, windows: Sequence[Interval], now: datetime) -> int:
    total = 0
    for priced in instance.segments:
        seg_end = priced.segment.end if priced.segment.end is not None else now
        for lo, hi in windows:
            total += whole_seconds(min(seg_end, hi) - max(priced.segment.start, lo))
    return total


def _tokens_per_step(records: Sequence[InstanceRecord], tag: str) -> int | None:
    from shared.tags import tokens_per_step

    for record in records:
        tokens = tokens_per_step(record.profile.tags.get(tag))
        if tokens is not None:
            return tokens
    return None


Interval = tuple[datetime, datetime]


def state_intervals(
    record: InstanceRecord, signal: str, value: str, now: datetime
) -> list[Interval]:
    """Where ``signal``'s alarm was in ``value``, by the states' own timestamps."""
    changes = sorted(
        {t.event_id: t for t in record.alarm_transitions if t.signal == signal}.values(),
        key=lambda t: (t.at, t.event_id),
    )
    intervals: list[Interval] = []
    since: datetime | None = None
    for change in changes:
        if change.state == value and since is None:
            since = change.at
        elif change.state != value and since is not None:
            intervals.append((since, change.at))
            since = None
    if since is not None:
        intervals.append((since, max(now, since)))
    return intervals


def intersect(a: Sequence[Interval], b: Sequence[Interval]) -> list[Interval]:
    out = []
    for a0, a1 in a:
        for b0, b1 in b:
            lo, hi = max(a0, b0), min(a1, b1)
            if lo < hi:
                out.append((lo, hi))
    return merge_windows(out)


def idle_windows(record: InstanceRecord, now: datetime) -> list[Interval]:
    """Rule 6: idle while both the accelerator-low and the CPU-low alarm are in ALARM,
    from the later of the two ALARM transitions until either leaves ALARM."""
    return intersect(
        state_intervals(record, "accelerator", "ALARM", now),
        state_intervals(record, "cpu", "ALARM", now),
    )


def latest_states(record: InstanceRecord) -> dict[str, tuple[str, datetime]]:
    """Each signal's current alarm state and since when (by timestamp, not arrival)."""
    current: dict[str, tuple[str, datetime]] = {}
    for t in sorted(record.alarm_transitions, key=lambda t: (t.at, t.event_id)):
        if t.signal not in current or current[t.signal][0] != t.state:
            current[t.signal] = (t.state, t.at)
    return current


def classify(record: InstanceRecord) -> tuple[str, datetime | None]:
    """The instance's utilization condition now: ``idle`` (accelerator and CPU low),
    ``input_bound`` (accelerator low, CPU busy), ``no_metrics`` (accelerator not
    measured: INSUFFICIENT_DATA is never 0 %), ``busy``, or ``unknown``; and since when."""
    states = latest_states(record)
    accel = states.get("accelerator")
    cpu = states.get("cpu")
    if accel is None:
        return "unknown", None
    if accel[0] == "INSUFFICIENT_DATA":
        return "no_metrics", accel[1]
    if accel[0] == "OK":
        return "busy", accel[1]
    if cpu is None or cpu[0] == "INSUFFICIENT_DATA":
        return "unknown", None
    since = max(accel[1], cpu[1])
    return ("idle", since) if cpu[0] == "ALARM" else ("input_bound", since)


def condition_runs(record: InstanceRecord) -> list[tuple[str, datetime]]:
    """The instance's utilization conditions in event-time order: (condition, since) each
    time it changes. Arrival order does not matter: the history is replayed by time."""
    ordered_changes = sorted(
        {t.event_id: t for t in record.alarm_transitions}.values(), key=lambda t: (t.at, t.event_id)
    )
    runs: list[tuple[str, datetime]] = []
    for n in range(1, len(ordered_changes) + 1):
        prefix = record.model_copy(update={"alarm_transitions": tuple(ordered_changes[:n])})
        condition, since = classify(prefix)
        if since is None:
            continue
        if not runs or runs[-1][0] != condition:
            runs.append((condition, since))
    return runs


def first_busy_at(records: Sequence[InstanceRecord]) -> datetime | None:
    """The job's first accelerator-busy signal (an accelerator alarm in OK)."""
    busy = [
        t.at
        for r in records
        for t in r.alarm_transitions
        if t.signal == "accelerator" and t.state == "OK"
    ]
    return min(busy, default=None)


def running_cost_between(
    cost: InstanceCost, start: datetime, end: datetime, now: datetime, *, list_price: bool = False
) -> Decimal:
    """Effective running cost inside (start, end]: split at the window's edges to the
    second; a segment's billing minimum belongs to the moment it closed."""
    total = Decimal(0)
    for priced in cost.segments:
        if not priced.steps:
            continue
        segment = priced.segment
        seg_end = segment.end if segment.end is not None else max(now, segment.start)
        lo, hi = max(start, segment.start), min(end, seg_end)
        if lo < hi:
            total += _integrate(priced.steps, lo, hi)[0 if list_price else 1]
        if segment.end is not None and start < segment.end <= end:
            extra = priced.billed_seconds - whole_seconds(segment.end - segment.start)
            if extra > 0:
                closing = _rate_at(priced.steps, segment.end)
                rate = closing.list_usd if list_price else closing.effective_usd
                total += Decimal(extra) * rate / SECONDS_PER_HOUR
    return total


def ebs_cost_between(
    record: InstanceRecord, start: datetime, end: datetime, now: datetime
) -> Decimal:
    total = Decimal(0)
    window = ebs_window(record.transitions, now)
    if window is not None:
        lo, hi = max(start, window[0]), min(end, window[1])
        if lo < hi:
            for volume in record.profile.volumes:
                volume_rate = record.volume_rates.get(volume.volume_type)
                if volume_rate is not None:
                    monthly = volume_rate.effective_usd * volume.size_gib
                    total += prorate_monthly(monthly, lo, hi)
    return total


def instance_cost_between(
    record: InstanceRecord, start: datetime, end: datetime, now: datetime
) -> Decimal:
    """Effective instance + EBS cost accrued inside (start, end], as known at ``now``.
    Over the whole lifetime this equals ``instance_cost`` (days add up to the job)."""
    return running_cost_between(instance_cost(record, now), start, end, now) + ebs_cost_between(
        record, start, end, now
    )


def storage_cost_between(
    obj: CheckpointObject, start: datetime, end: datetime, now: datetime
) -> Decimal:
    if obj.rate is None:
        return Decimal(0)
    total = Decimal(0)
    for span in object_spans(obj):
        span_end = span.end if span.end is not None else max(now, span.start)
        lo, hi = max(start, span.start), min(end, span_end)
        if lo < hi:
            monthly = obj.rate.effective_usd * Decimal(span.size_bytes) / GIB
            total += prorate_monthly(monthly, lo, hi)
    return total


def spend_between(
    records: Sequence[InstanceRecord],
    checkpoints: Sequence[CheckpointObject],
    start: datetime,
    end: datetime,
    now: datetime,
) -> Decimal:
    """A job's total (instance + EBS + checkpoint storage) accrued inside (start, end]."""
    return sum((instance_cost_between(r, start, end, now) for r in records), Decimal(0)) + sum(
        (storage_cost_between(o, start, end, now) for o in checkpoints), Decimal(0)
    )


def clip(windows: Sequence[Interval], start: datetime, end: datetime) -> list[Interval]:
    return [(max(lo, start), min(hi, end)) for lo, hi in windows if lo < end and hi > start]


def job_day_breakdown(
    records: Sequence[InstanceRecord],
    checkpoints: Sequence[CheckpointObject],
    start: datetime,
    end: datetime,
    now: datetime,
) -> dict[str, Decimal]:
    """A job's costs inside (start, end]: instance, EBS, checkpoint storage, and the
    rerun and idle portions of its instance cost that fall in the window."""
    costs = {r.instance_id: instance_cost(r, now) for r in records}
    instance = sum((running_cost_between(c, start, end, now) for c in costs.values()), Decimal(0))
    ebs = sum((ebs_cost_between(r, start, end, now) for r in records), Decimal(0))
    storage = sum((storage_cost_between(o, start, end, now) for o in checkpoints), Decimal(0))
    starts = [s.segment.start for c in costs.values() for s in c.segments]
    windows, _ = rerun_windows(records, checkpoints, min(starts) if starts else None, now)
    rerun = cost_inside(list(costs.values()), clip(windows, start, end), now)
    idle = sum(
        (
            cost_inside([costs[r.instance_id]], clip(idle_windows(r, now), start, end), now)
            for r in records
        ),
        Decimal(0),
    )
    return {
        "instance": instance,
        "ebs": ebs,
        "checkpoint_storage": storage,
        "total": instance + ebs + storage,
        "wasted_rerun": rerun,
        "wasted_idle": idle,
    }
