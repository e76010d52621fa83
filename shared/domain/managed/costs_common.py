"""What managed training and reserved capacity rules share: whole seconds, monthly
proration by calendar month, the job tag lookup. Decimal money, the clock passed in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from shared.domain.clock import month_start, next_month_start

HOUR = Decimal(3600)
DEFAULT_JOB_TAG_KEYS: tuple[str, ...] = ("training-job",)


def whole_seconds(start: datetime, end: datetime) -> int:
    """Elapsed seconds, a started second counting whole; 0 if ``end`` is not after ``start``.
    (The span's length rounded up: ``shared.domain.clock.whole_seconds`` rounds each end
    up instead, as the EC2 ledger does.)"""
    delta = end - start
    if delta <= timedelta(0):
        return 0
    return delta.days * 86400 + delta.seconds + (1 if delta.microseconds else 0)


def prorate_monthly(usd_per_month: Decimal, start: datetime, end: datetime) -> Decimal:
    """A monthly price accrued per second, each calendar month by its own length (as EBS)."""
    total = Decimal(0)
    cursor, end = start.astimezone(UTC), end.astimezone(UTC)
    while cursor < end:
        boundary = next_month_start(cursor)
        piece_end = min(end, boundary)
        month_seconds = Decimal((boundary - month_start(cursor)).days * 86400)
        total += usd_per_month * Decimal(whole_seconds(cursor, piece_end)) / month_seconds
        cursor = piece_end
    return total


def first_job_tag(tags: Mapping[str, str], job_tag_keys: Sequence[str]) -> str | None:
    for key in job_tag_keys:
        value = tags.get(key)
        if value:
            return value
    return None
