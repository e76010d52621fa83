"""Honest budget forecasts: each running job is projected to its declared end, else by
its own run pattern so far, never to a horizon that moves with the clock.

- A job tagged ``expected-duration-hours`` (``ledger.budgeting.expected_duration_tag``)
  is projected at its current burn until its first event plus that many hours.
- A job without one (or past its declared end) is projected to run as long again as it
  has run so far (from its first event to now): the longer a run has lasted, the longer
  it is expected to last; a job that just started adds little.
- Either end stops at the budget period's end (month, day).

The projected total is the spend so far plus what the running jobs accrue until their
projected ends; the projected 100 % crossing is the first moment that projection reaches
the budget. A forecast alert is sent once when the projection exceeds the budget, and
again only when the projected crossing has moved at least an hour earlier than in every
forecast sent before for that budget and period.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from shared.adapters.outbox import OutboxStore
from shared.domain import accrual as acc
from shared.domain.job import rollup_tags
from shared.reports.formatting import iso

RESEND_EARLIER = timedelta(hours=1)
MAX_DECLARED_HOURS = Decimal(24 * 366)
Total = Callable[[acc.Accrual, datetime], Decimal]


@dataclass(frozen=True)
class JobProjection:
    job_id: str
    accrual: acc.Accrual
    until: datetime
    method: str  # "declared" or "run_pattern"
    how: str  # one line for the alert body


@dataclass(frozen=True)
class Forecast:
    total: Decimal
    until: datetime
    crossing: datetime | None
    projections: tuple[JobProjection, ...]

    @property
    def by_run_pattern(self) -> bool:
        return any(p.method == "run_pattern" for p in self.projections)

    def declared_ends(self, now: datetime) -> list[datetime]:
        return [p.until for p in self.projections if p.method == "declared" and p.until > now]

    def lines(self) -> list[str]:
        if not self.projections:
            return ["How it was projected: nothing in scope is running; no further spend."]
        return ["How it was projected (each running job at its current burn):"] + [
            f"  {p.how}" for p in self.projections
        ]


def declared_hours(value: str | None) -> Decimal | None:
    """The tag's hours (a positive number), or None when absent or not a number."""
    if not value:
        return None
    try:
        hours = Decimal(value.strip())
    except InvalidOperation:
        return None
    if not hours.is_finite() or hours <= 0 or hours > MAX_DECLARED_HOURS:
        return None
    return hours


def project_job(
    job_id: str,
    rollups: Sequence[dict[str, Any]],
    accrual: acc.Accrual,
    now: datetime,
    period_end: datetime | None,
    duration_tag: str,
) -> JobProjection:
    """Where an open job's spend is projected to stop (``accrual.is_open()``)."""
    firsts = [str(r["first_event_at"]) for r in rollups if r.get("first_event_at")]
    start = datetime.fromisoformat(min(firsts)) if firsts else now
    tags, _ = rollup_tags(rollups)
    hours = declared_hours(tags.get(duration_tag))
    declared_end = start + timedelta(hours=float(hours)) if hours is not None else None
    if declared_end is not None and declared_end > now:
        until, method = declared_end, "declared"
        how = f"{job_id}: to its declared end {iso(until)} ({duration_tag}={tags[duration_tag]})"
    else:
        ran = now - start
        until, method = now + ran, "run_pattern"
        past = f", past its declared end {iso(declared_end)}" if declared_end else ""
        how = (
            f"{job_id}: as long again as it has run so far ({_hours(ran)} since "
            f"{iso(start)}{past}), to {iso(until)}"
        )
    if period_end is not None and until > period_end:
        until = period_end
        how += f"; stopped at the period's end {iso(period_end)}"
    return JobProjection(job_id, accrual, until, method, how)


def forecast(
    spend: Decimal,
    amount: Decimal,
    projections: Sequence[JobProjection],
    now: datetime,
    total: Total,
) -> Forecast:
    """The projected total and the first moment the projection reaches ``amount``."""
    base = {p.job_id: total(p.accrual, now) for p in projections}

    def at(moment: datetime) -> Decimal:
        return spend + sum(
            (total(p.accrual, min(moment, p.until)) - base[p.job_id] for p in projections),
            Decimal(0),
        )

    until = max([now, *(p.until for p in projections)])
    projected = at(until)
    crossing = None
    if spend < amount <= projected:
        low, high = 0, int((until - now).total_seconds()) + 1  # at(now + high) >= amount
        while high - low > 1:
            middle = (low + high) // 2
            if at(now + timedelta(seconds=middle)) >= amount:
                high = middle
            else:
                low = middle
        crossing = now + timedelta(seconds=high)
    return Forecast(projected, until, crossing, tuple(projections))


def sent_forecasts(outbox: OutboxStore, base_id: str) -> tuple[int, datetime | None]:
    """How many forecasts were recorded for a budget and period (``base_id`` and its
    revisions), and the earliest projected crossing among them."""
    count, earliest = 0, None
    for alert in outbox.revisions(base_id):
        count += 1
        attributes = alert.attributes
        text = attributes.get("projected_crossing_at", "")
        if text and text != "n/a":
            crossing = datetime.fromisoformat(text.replace("Z", "+00:00"))
            earliest = crossing if earliest is None else min(earliest, crossing)
    return count, earliest


def forecast_revision(
    sent: tuple[int, datetime | None], base_id: str, crossing: datetime | None
) -> str | None:
    """The alert id for a forecast with this crossing: the base id for the first one, a
    numbered revision when the crossing is at least an hour earlier than every forecast
    sent before, else None (nothing new to say)."""
    count, earliest = sent
    if crossing is None:
        return None
    if not count:
        return base_id
    if earliest is not None and crossing > earliest - RESEND_EARLIER:
        return None
    return f"{base_id}:{count + 1}"


def revision_possible(sent: tuple[int, datetime | None], at_current_burn: datetime | None) -> bool:
    """Whether, with no new event, a later tick could revise the forecast: the projected
    crossing only moves earlier as run-pattern ends move out, never before the crossing
    at the current burn rate of everything running."""
    count, earliest = sent
    if not count or earliest is None or at_current_burn is None:
        return count == 0
    return at_current_burn <= earliest - RESEND_EARLIER


def _hours(span: timedelta) -> str:
    return f"{span.total_seconds() / 3600:.1f} h"
