"""A budget's periods over the finance calendar (the budgets themselves are configuration:
``shared.config.budgets``)."""

from __future__ import annotations

from datetime import UTC, date, datetime

from shared.config.budgets import Budget
from shared.domain.finance_day import UTC_CALENDAR, FinanceCalendar


def period_bounds(
    budget: Budget, now: datetime, calendar: FinanceCalendar = UTC_CALENDAR
) -> tuple[datetime, datetime | None, str]:
    """(start, end, key) of the budget's period containing ``now``: a ``day`` or ``month``
    of the finance calendar (cost rule 12: a New York month starts at 04:00Z or 05:00Z),
    as UTC instants; a total budget has no end. The key names the period in alert
    de-duplication."""
    now = now.astimezone(UTC)
    if budget.period == "day":
        day = calendar.day_of(now)
        start, end = calendar.bounds(day)
        return start, end, day.isoformat()
    if budget.period == "month":
        return calendar.month_bounds(now)
    since = budget.since or date(2000, 1, 1)
    return datetime(since.year, since.month, since.day, tzinfo=UTC), None, "total"
