"""Which alarm events speak for an instance: only the alarm the tracker last put, as it
recorded it when it put it (``shared.domain.alarm_record``). An alarm under the tracker's
name in another account or region, re-created with another metric, period, statistic or
threshold, or for an instance the tracker puts no alarms for, is someone else's."""

from __future__ import annotations

from datetime import datetime

from shared.adapters.alarm_store import AlarmStore
from shared.domain.alarm_record import AlarmIdentity, PutAlarm, why_not_ours
from shared.services.deps import LedgerDeps


def alarm_we_put(
    deps: LedgerDeps, seen: AlarmIdentity | None, state_at: datetime
) -> tuple[PutAlarm | None, str]:
    """(the tracker's record of the alarm, "") when ``seen`` is the alarm it last put;
    (None, why not) otherwise. One GetItem, keyed by the event's own ARN."""
    put = (
        AlarmStore(deps.table).get(seen.account, seen.region, seen.name)
        if seen is not None
        else None
    )
    reason = why_not_ours(put, seen, state_at)
    return (put, "") if not reason else (None, reason)
