"""A budget's forecast from the ledger: the facts of each job in scope (first and last
event, declared length, whether it still accrues) handed to the one forecast model
(``shared.domain.forecast``), and which forecast alerts were already recorded.

A forecast alert is recorded once when the central projection exceeds the budget, and
again only when the projected 100 % crossing has moved at least an hour earlier than
in every forecast recorded before for that budget and period (new facts moved it).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from shared.adapters.outbox import OutboxStore
from shared.domain.forecast import JobFacts
from shared.domain.job import rollup_tags

RESEND_EARLIER = timedelta(hours=1)
MAX_DECLARED_HOURS = Decimal(24 * 366)


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


def job_facts(
    job_id: str, rollups: Sequence[dict[str, Any]], running: bool, now: datetime, duration_tag: str
) -> JobFacts:
    """What the forecast needs to know of a job, from its rollups."""
    firsts = [str(r["first_event_at"]) for r in rollups if r.get("first_event_at")]
    lasts = [str(r["last_event_at"]) for r in rollups if r.get("last_event_at")]
    first = datetime.fromisoformat(min(firsts)) if firsts else now
    last = datetime.fromisoformat(max(lasts)) if lasts else first
    tags, _ = rollup_tags(rollups)
    return JobFacts(
        job_id=job_id,
        running=running,
        first_event_at=first,
        last_event_at=max(last, first),
        declared_hours=declared_hours(tags.get(duration_tag)),
    )


def sent_forecasts(outbox: OutboxStore, base_id: str) -> tuple[int, datetime | None]:
    """How many forecasts were recorded for a budget and period (``base_id`` and its
    revisions), and the earliest projected crossing among them."""
    count, earliest = 0, None
    for alert in outbox.revisions(base_id):
        count += 1
        text = alert.attributes.get("projected_crossing_at", "")
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
