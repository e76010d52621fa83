"""Idle accelerators (cost rule 6): idle while both the tracker's own accelerator-low
and CPU-low alarms are in ALARM; idle cost is the instance's cost from the later of
the two ALARM transitions until either alarm leaves ALARM or the instance stops.

A stop ends idleness: after a restart both alarms must go to ALARM again after that
``running``. INSUFFICIENT_DATA means "not measured", never 0 %: a monitoring gap.
Accelerator low with CPU busy is ``input_bound``, not idle.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from typing import Literal

from shared.domain import accrual as acc
from shared.domain.accrual import Accrual
from shared.domain.base import Frozen
from shared.domain.clock import SECONDS_PER_HOUR, seconds_clock, whole_seconds
from shared.domain.segments import SegmentCost, SeriesReader

Signal = Literal["accelerator", "cpu"]
AlarmValue = Literal["OK", "ALARM", "INSUFFICIENT_DATA"]
MAX_ALARM_CHANGES = 48


class WatchedMetric(Frozen):
    """What an alarm watches, as its state-change event says: one metric, its dimensions,
    period and statistic (compared with what the tracker puts before the alarm speaks)."""

    namespace: str
    name: str
    dimensions: tuple[tuple[str, str], ...] = ()
    period: int | None = None
    stat: str | None = None


class AlarmChange(Frozen):
    """One of the tracker's own alarms of an instance changing state (``at`` is the
    state's own timestamp)."""

    event_id: str
    at: datetime
    signal: Signal
    state: AlarmValue


class IdleEpisode(Frozen):
    """An idle stretch inside one segment; closed ones carry their cost."""

    segment_key: str
    start: datetime
    end: datetime | None
    eff_num: Decimal | None = None  # USD-seconds/hour, closed and priced only
    list_num: Decimal | None = None
    clock: str | None = None  # the open episode's clock (None: unpriced)
    eff_weight: Decimal = Decimal(0)
    list_weight: Decimal = Decimal(0)
    since: Decimal = Decimal(0)  # clock value at ``start``


def _intervals(
    changes: Sequence[AlarmChange], signal: str, lo: datetime, hi: datetime | None
) -> list[tuple[datetime, datetime | None]]:
    """Where ``signal``'s alarm was in ALARM inside (lo, hi]: only changes after ``lo``
    (the segment's running) count; its alarms start unknown."""
    out: list[tuple[datetime, datetime | None]] = []
    since: datetime | None = None
    for change in changes:
        if change.signal != signal or change.at < lo or (hi is not None and change.at > hi):
            continue
        if change.state == "ALARM" and since is None:
            since = change.at
        elif change.state != "ALARM" and since is not None:
            out.append((since, change.at))
            since = None
    if since is not None:
        out.append((since, hi))
    return out


def ordered_changes(changes: Sequence[AlarmChange]) -> list[AlarmChange]:
    unique = {c.event_id: c for c in changes}
    return sorted(unique.values(), key=lambda c: (c.at, c.event_id))


def idle_spans(
    segment: SegmentCost, changes: Sequence[AlarmChange]
) -> list[tuple[datetime, datetime | None]]:
    return _idle_spans(segment, ordered_changes(changes))


def _idle_spans(
    segment: SegmentCost, ordered_: Sequence[AlarmChange]
) -> list[tuple[datetime, datetime | None]]:
    """``idle_spans`` of changes already as ``ordered_changes`` returns them."""
    span = segment.span
    accel = _intervals(ordered_, "accelerator", span.start, span.end)
    if not accel:
        return []
    cpu = _intervals(ordered_, "cpu", span.start, span.end)
    out = []
    for a0, a1 in accel:
        for c0, c1 in cpu:
            lo = max(a0, c0)
            ends = [e for e in (a1, c1, span.end) if e is not None]
            hi = min(ends) if ends else None
            if hi is None or lo < hi:
                out.append((lo, hi))
    return sorted(out)


def episodes(
    segments: Sequence[SegmentCost], changes: Sequence[AlarmChange], series: SeriesReader | None
) -> tuple[IdleEpisode, ...]:
    if not changes:
        return ()
    out: list[IdleEpisode] = []
    ordered_ = ordered_changes(changes)  # once for every segment
    for segment in segments:
        pin = segment.pin
        for lo, hi in _idle_spans(segment, ordered_):
            episode = IdleEpisode(segment_key=segment.span.key, start=lo, end=hi)
            if pin is None:
                out.append(episode)
                continue
            if hi is not None:
                if pin.rate is not None:
                    secs = whole_seconds(lo, hi)
                    eff = pin.rate.effective_usd * secs
                    lst = pin.rate.list_usd * secs
                else:
                    assert pin.series is not None and series is not None
                    eff = lst = series.integral(pin.series, hi) - series.integral(pin.series, lo)
                out.append(episode.model_copy(update={"eff_num": eff, "list_num": lst}))
            elif pin.rate is not None:
                out.append(
                    episode.model_copy(
                        update={
                            "clock": acc.SECONDS_CLOCK,
                            "eff_weight": pin.rate.effective_usd,
                            "list_weight": pin.rate.list_usd,
                            "since": Decimal(seconds_clock(lo)),
                        }
                    )
                )
            else:
                assert pin.series is not None and series is not None
                out.append(
                    episode.model_copy(
                        update={
                            "clock": acc.spot_clock(pin.series),
                            "eff_weight": Decimal(1),
                            "list_weight": Decimal(1),
                            "since": series.integral(pin.series, lo),
                        }
                    )
                )
    return tuple(out)


def episode_accrual(episode: IdleEpisode) -> Accrual:
    out = Accrual()
    if episode.end is not None:
        if episode.eff_num is not None and episode.list_num is not None:
            out.fixed(acc.IDLE, acc.SECONDS_CLOCK, SECONDS_PER_HOUR, episode.eff_num)
            out.fixed(acc.IDLE_LIST, acc.SECONDS_CLOCK, SECONDS_PER_HOUR, episode.list_num)
            out.fixed(
                "idle_seconds", acc.SECONDS_CLOCK, 1, whole_seconds(episode.start, episode.end)
            )
        return out
    out.linear("idle_seconds", acc.SECONDS_CLOCK, 1, 1, seconds_clock(episode.start))
    if episode.clock is not None:
        out.linear(acc.IDLE, episode.clock, SECONDS_PER_HOUR, episode.eff_weight, episode.since)
        out.linear(
            acc.IDLE_LIST, episode.clock, SECONDS_PER_HOUR, episode.list_weight, episode.since
        )
    return out


Condition = Literal["idle", "input_bound", "no_metrics", "busy", "unknown"]


def classify(
    changes: Sequence[AlarmChange], running_since: datetime | None
) -> tuple[Condition, datetime | None]:
    """The instance's condition now, from its alarms since its latest ``running``."""
    if running_since is None:
        return "unknown", None
    state: dict[str, tuple[str, datetime]] = {}
    for change in ordered_changes(changes):
        if change.at < running_since:
            continue
        if change.signal not in state or state[change.signal][0] != change.state:
            state[change.signal] = (change.state, change.at)
    accel = state.get("accelerator")
    cpu = state.get("cpu")
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


def condition_runs(
    changes: Sequence[AlarmChange], running_since: datetime | None
) -> list[tuple[Condition, datetime]]:
    """Conditions in event-time order since the latest running: (condition, since) at each
    change, so a late event still yields the same episodes."""
    ordered_ = [c for c in ordered_changes(changes) if running_since and c.at >= running_since]
    runs: list[tuple[Condition, datetime]] = []
    for n in range(1, len(ordered_) + 1):
        condition, since = classify(ordered_[:n], running_since)
        if since is None:
            continue
        if not runs or runs[-1][0] != condition:
            runs.append((condition, since))
    return runs
