"""The admins' operational figures (shared/services/ops_metrics.py): bounded teams,
utilization, checkpoint storage at a moment."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from shared.domain.checkpoint import CheckpointHead, Version
from shared.domain.job import JobRecords
from shared.services.ops_metrics import (
    MAX_TEAMS,
    OTHER,
    TeamFigures,
    bounded,
    stored_bytes,
)


def at(hour: int) -> datetime:
    return datetime(2026, 11, 1, hour, tzinfo=UTC)


def test_utilization_is_the_share_not_idle_and_none_without_hours() -> None:
    assert TeamFigures(Decimal(6), Decimal("1.5")).utilization_percent == Decimal(75)
    assert TeamFigures(Decimal(0), Decimal(0)).utilization_percent is None
    assert TeamFigures(Decimal(2), Decimal(3)).utilization_percent == 0  # never below 0


def test_teams_are_bounded_the_rest_summed_as_other() -> None:
    teams = {f"team-{n:02d}": TeamFigures(Decimal(n + 1), Decimal(1)) for n in range(25)}
    kept = bounded(teams)
    assert len(kept) == MAX_TEAMS + 1
    assert "team-24" in kept and "team-05" in kept and "team-04" not in kept
    # The five smallest (1..5 hours, 1 idle hour each) are summed.
    assert kept[OTHER].accelerator_hours == Decimal(15)
    assert kept[OTHER].idle_hours == Decimal(5)
    total = sum((t.accelerator_hours for t in kept.values()), Decimal(0))
    assert total == sum((t.accelerator_hours for t in teams.values()), Decimal(0))
    few = {"a": TeamFigures(Decimal(1))}
    assert bounded(few) == few


def test_stored_bytes_counts_versions_alive_at_the_moment() -> None:
    head = CheckpointHead(
        bucket="ckpt",
        key="runs/a/step-1/model.pt",
        job_id="a",
        region="us-east-1",
        versions=(
            Version(write_event_id="w1", start=at(1), end=at(3), size_bytes=100),
            Version(write_event_id="w2", start=at(3), end=None, size_bytes=250),
        ),
    )
    other = head.model_copy(
        update={
            "key": "runs/a/step-2/model.pt",
            "versions": (Version(write_event_id="w3", start=at(2), end=None, size_bytes=7),),
        }
    )
    records = JobRecords(job_id="a", checkpoints=[head, other])
    assert stored_bytes(records, at(0)) == 0
    assert stored_bytes(records, at(2)) == 107
    assert stored_bytes(records, at(3)) == 257  # the overwrite replaced 100 with 250
