"""The admins' operational picture, as figures for CloudWatch (the stack's dashboard):
accelerator-hours and utilization by team per UTC day, checkpoint storage at the day's
end, and accelerators idle right now.

"Utilization" here is the share of accelerator running time the instance's own alarms
did not call idle (cost rule 6); the accelerator metric itself is not read. Team values
come from the job's ``team_tag_key`` tag; their number is bounded (``MAX_TEAMS`` by
accelerator-hours, the rest as ``other``), so CloudWatch's metric count stays bounded
whatever people tag with.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime
from decimal import Decimal

from shared.domain.clock import SECONDS_PER_HOUR, whole_seconds
from shared.domain.day_split import checkpoint_versions
from shared.domain.finance_day import calendar_of
from shared.domain.idle import classify
from shared.domain.instance import InstanceHead
from shared.domain.job import JobRecords, rollup_tags
from shared.domain.ops_figures import DayFigures, TeamFigures
from shared.domain.spend_change import accelerator_figures, is_accelerator
from shared.services.deps import LedgerDeps
from shared.services.job_view import records_active_on

MAX_TEAMS = 20
OTHER = "other"
UNTAGGED = "untagged"
GB = Decimal(2**30)
CONDITIONS = ("idle", "input_bound", "no_metrics", "other")


def idle_hours(records: JobRecords, lo: datetime, hi: datetime, now: datetime) -> Decimal:
    """Idle time of the job's accelerator instances inside (lo, hi] (rule 6 episodes)."""
    types = {h.instance_id: h.profile.instance_type for h in records.heads}
    episodes = list(records.idle) + [(h.instance_id, e) for h in records.heads for e in h.idle]
    unique = {(i, e.segment_key, e.start): (i, e) for i, e in episodes}
    seconds = 0
    for instance_id, episode in unique.values():
        if is_accelerator(types.get(instance_id, "")):
            seconds += whole_seconds(max(lo, episode.start), min(hi, episode.end or now))
    return Decimal(seconds) / SECONDS_PER_HOUR


def stored_bytes(records: JobRecords, at: datetime) -> int:
    """Bytes of the job's checkpoint versions stored at ``at``."""
    return sum(
        v.size_bytes
        for _, v in checkpoint_versions(records)
        if v.start <= at and (v.end is None or v.end > at)
    )


def bounded(teams: dict[str, TeamFigures], limit: int = MAX_TEAMS) -> dict[str, TeamFigures]:
    """The ``limit`` teams with the most accelerator-hours (ties by name); the rest summed
    as ``other``."""
    ranked = sorted(teams.items(), key=lambda kv: (-kv[1].accelerator_hours, kv[0]))
    kept = dict(ranked[:limit])
    if len(ranked) > limit:
        rest = kept.setdefault(OTHER, TeamFigures())
        for _, figures in ranked[limit:]:
            rest.accelerator_hours += figures.accelerator_hours
            rest.idle_hours += figures.idle_hours
    return kept


class DayFiguresWalk:
    """A UTC day's figures, added up job by job: the daily summary's own walk of the day's
    records feeds it (``summarize_day(each_job=...)``), so the figures cost no second
    read of the day."""

    def __init__(self, deps: LedgerDeps, day: date, now: datetime) -> None:
        self.deps, self.day, self.now = deps, day, now
        self.start, self.end = calendar_of(deps.config).bounds(day)
        self.teams: dict[str, TeamFigures] = {}
        self.stored = 0

    def add(self, records: JobRecords) -> None:
        start, end, now = self.start, self.end, self.now
        self.stored += stored_bytes(records, min(end, now))
        hours, _ = accelerator_figures(records, start, end, now, self.deps.prices.series)
        if not hours:
            return
        tags, _ = rollup_tags(records.rollups)
        team = tags.get(self.deps.config.access.team_tag_key) or UNTAGGED
        figures = self.teams.setdefault(team, TeamFigures())
        figures.accelerator_hours += hours
        figures.idle_hours += idle_hours(records, start, end, now)

    def figures(self) -> DayFigures:
        return DayFigures(
            day=self.day, teams=bounded(self.teams), checkpoint_storage_gb=self.stored / GB
        )


def day_figures(deps: LedgerDeps, day: date, now: datetime) -> DayFigures:
    """One UTC day's figures, as the ledger knows them at ``now`` (a walk of its own)."""
    walk = DayFiguresWalk(deps, day, now)
    for _, records in records_active_on(deps, day, walk.start, now):
        walk.add(records)
    return walk.figures()


def accelerators_by_condition(heads: Iterable[InstanceHead]) -> dict[str, int]:
    """Running accelerator instances by what their own alarms say now: ``idle``,
    ``input_bound``, ``no_metrics`` (INSUFFICIENT_DATA), ``other`` (busy, or no alarm state
    yet)."""
    out = dict.fromkeys(CONDITIONS, 0)
    for head in heads:
        segment = head.open_segment
        if segment is None or not is_accelerator(head.profile.instance_type):
            continue
        condition, _ = classify(head.alarms, segment.span.start)
        out[condition if condition in out else "other"] += 1
    return out
