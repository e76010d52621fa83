"""Chaos for replays: what EventBridge may do to a scenario's events.

Each event is delayed by up to ``max_delay`` (it arrives after later ones), and some
are delivered twice. The ledger must come out the same; an alert may only be sent
later, by no more than the delay (its ``at`` is when it would have been sent).
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from shared.domain.clock import utc


def _time(event: Any) -> datetime | None:
    try:
        return utc(datetime.fromisoformat(str(event["time"]).replace("Z", "+00:00")))
    except (KeyError, TypeError, ValueError):
        return None


def chaotic(
    events: list[Any],
    seed: int,
    max_delay: timedelta = timedelta(minutes=5),
    duplicate_share: float = 0.2,
) -> list[Any]:
    """The events in a chaotic order of arrival (deterministic for a seed)."""
    rng = random.Random(seed)
    arrivals: list[tuple[datetime, int, Any]] = []
    first = min((t for t in map(_time, events) if t is not None), default=None)
    last: datetime | None = None
    for n, event in enumerate(events):
        at = _time(event) or last or first
        if at is None:  # no event has a time: keep the order, add the duplicates
            arrivals.append((datetime(1970, 1, 1, tzinfo=UTC), n, event))
            continue
        last = at
        copies = 2 if rng.random() < duplicate_share else 1
        for _ in range(copies):
            delay = timedelta(seconds=rng.uniform(0, max_delay.total_seconds()))
            arrivals.append((at + delay, n, event))
    arrivals.sort(key=lambda a: (a[0], a[1]))
    return [event for _, _, event in arrivals]
