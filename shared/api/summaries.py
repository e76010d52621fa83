"""Daily summaries and reconciliations as stored by the daily run (finance and admins)."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from shared.api.caller import access, new_router, runtime_of
from shared.api.errors import bad_input, not_found
from shared.api.models.budgets import SummaryDay, SummaryDays
from shared.api.params import check_range

router = new_router()


@router.get("/summaries/<day>")
def get_summary(day: Annotated[date, Path()]) -> dict[str, Any]:
    """The stored daily summary of one finance day (written by the daily run or a backfill):
    the document of the daily summary e-mail and S3 object."""
    rt = runtime_of(router)
    access(router).finance_or_admin("the daily summary")
    found: dict[date, dict[str, Any]] = rt.summary_store.get_summaries([day])
    if day not in found:
        raise not_found("day", f"no summary for {day.isoformat()} (yet)")
    return found[day]


@router.get("/reconciliations/<day>")
def get_reconciliation(day: Annotated[date, Path()]) -> dict[str, Any]:
    """A day's estimate against the bill (per job, with the accuracy), once reconciled."""
    rt = runtime_of(router)
    access(router).finance_or_admin("reconciliation")
    found: dict[date, dict[str, Any]] = rt.reconciliation_store.get_reconciliations([day])
    if day not in found:
        raise not_found("day", f"{day.isoformat()} is not reconciled (yet, or not enabled)")
    return found[day]


def _day(day: date, summary: dict[str, Any] | None, group_by: str | None) -> SummaryDay:
    if summary is None:
        return SummaryDay(date=day.isoformat(), available=False)
    entry = {
        "date": day.isoformat(),
        "available": True,
        "total_usd": summary["total_usd"],
        "untagged_usd": summary["untagged_usd"],
    }
    if group_by is not None:
        entry["by_tag"] = summary["by_tag"].get(group_by, {})
    return SummaryDay.model_validate(entry)


@router.get("/summaries")
def list_summaries(
    from_: Annotated[date, Query(alias="from")],
    to: Annotated[date, Query()],
    group_by: Annotated[str | None, Query(max_length=128)] = None,
) -> SummaryDays:
    """Daily totals over a range (at most 93 days); ``group_by`` a grouping tag key gives
    each day's split by that tag."""
    rt = runtime_of(router)
    access(router).finance_or_admin("daily summaries")
    check_range(from_, to, "from")
    keys = rt.settings.config.tracking.grouping_tag_keys
    if group_by is not None and group_by not in keys:
        raise bad_input("group_by", f"not a grouping tag key (one of {', '.join(keys)})")
    days = [from_ + timedelta(days=n) for n in range((to - from_).days + 1)]
    found = rt.summary_store.get_summaries(days)
    return SummaryDays.model_validate(
        {
            "from": from_.isoformat(),
            "to": to.isoformat(),
            "group_by": group_by,
            "days": [_day(day, found.get(day), group_by) for day in days],
        }
    )
