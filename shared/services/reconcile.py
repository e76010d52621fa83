"""Reconciliation with the bill (opt-in): Cost Explorer's daily cost by job tag and service,
once a day is final, against our estimate of the same day.

Each GetCostAndUsage request costs $0.01: one request (paged) per day, and a day that
Cost Explorer marks final is never asked again (its reconciliation item is the cache).
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Protocol

from shared.adapters.cost_explorer import BilledDay
from shared.adapters.job_records import load_job
from shared.config.ledger import LedgerConfig
from shared.domain.clock import day_bounds
from shared.domain.day_split import job_between
from shared.domain.limits import RECONCILED_JOBS
from shared.reports.formatting import iso, money
from shared.services.deps import LedgerDeps
from shared.services.job_view import active_between, all_rollups
from shared.services.summaries import summarize_day

if TYPE_CHECKING:  # the Data Exports reader is loaded only when exports are configured
    from shared.adapters.daily_store import ReconciliationStore
    from shared.services.data_exports import BilledLine

ESTIMATED_KINDS = ("instance", "ebs", "checkpoint_storage")


class BillSource(Protocol):
    def billed_day(self, day: date, job_tag_key: str) -> BilledDay: ...


def _pct(estimated: Decimal, billed: Decimal) -> str | None:
    return f"{(estimated - billed) * 100 / billed:.2f}" if billed else None


def _estimate(
    deps: LedgerDeps, job_id: str, start: datetime, end: datetime, now: datetime
) -> dict[str, Decimal]:
    records = load_job(deps.table, deps.rollups, job_id, since=start)
    if records is None:
        return {k: Decimal(0) for k in ESTIMATED_KINDS}
    inside, _ = job_between(records, start, end, now, deps.prices.series)
    return inside


class LineSource(Protocol):
    """Billed lines by resource (``DataExports``: the account's Data Exports)."""

    def lines(self, day: date) -> list[BilledLine]: ...


def reconcile_by_resource(
    deps: LedgerDeps, exports: LineSource, day: date, now: datetime
) -> dict[str, Any]:
    """Each job's estimate of ``day``, per resource id, against the Data Exports lines
    (``shared.services.data_exports.reconcile_resources``); the estimates are the day's
    FOCUS rows, as the daily export writes them."""
    from shared.services.data_exports import estimates_from_focus_rows, reconcile_resources

    _, rows = summarize_day(deps, day, now)
    return reconcile_resources(estimates_from_focus_rows(rows), exports.lines(day))


def _settled(cached: dict[str, Any]) -> bool:
    """The stored day's reconciliation by resource is read and every job confirmed."""
    by_resource = cached.get("by_resource")
    return (
        by_resource is not None
        and "error" not in by_resource
        and all(j["status"] == "confirmed" for j in by_resource["jobs"])
    )


def reconcile_day(
    deps: LedgerDeps,
    store: ReconciliationStore,
    config: LedgerConfig,
    bills: BillSource,
    day: date,
    now: datetime,
    exports: LineSource | None = None,
) -> dict[str, Any]:
    """Compare one day's estimate with the bill; a final day is stored and never re-asked.
    With ``exports`` the day also gets ``by_resource`` (see ``reconcile_by_resource``)."""
    cached = store.get_reconciliations([day]).get(day)
    if cached is not None and cached.get("final") and (exports is None or _settled(cached)):
        return cached
    billed = bills.billed_day(day, config.tracking.job_tag_keys[0])
    start, end = day_bounds(day)
    jobs: dict[str, Any] = {}
    total_estimated = total_billed = Decimal(0)
    rollups = all_rollups(deps.rollups)
    active = {j for j, r in rollups.items() if active_between(r, day, day, now)}
    for job_id in sorted(active | set(billed.by_job)):
        estimate = _estimate(deps, job_id, start, end, now)
        bill = billed.by_job.get(job_id, {})
        estimated = sum((estimate[k] for k in ESTIMATED_KINDS), Decimal(0))
        confirmed = sum((bill.get(k, Decimal(0)) for k in ESTIMATED_KINDS), Decimal(0))
        total_estimated += estimated
        total_billed += confirmed
        jobs[job_id] = {
            "estimated_usd": money(estimated),
            "billed_usd": money(confirmed),
            "difference_usd": money(estimated - confirmed),
            "difference_pct": _pct(estimated, confirmed),
            "by_kind": {
                kind: {
                    "estimated_usd": money(estimate.get(kind, Decimal(0))),
                    "billed_usd": money(bill.get(kind, Decimal(0))),
                }
                for kind in ESTIMATED_KINDS
            },
            # Items the events cannot see, now with their billed values.
            "unconfirmed_billed_usd": {
                kind: money(bill.get(kind, Decimal(0)))
                for kind in ("data_transfer", "cloudwatch", "other")
            },
            "status": "confirmed" if billed.final else "estimated",
        }
    result = {
        "date": day.isoformat(),
        "final": billed.final,
        "status": "confirmed" if billed.final else "estimated",
        "estimated_usd": money(total_estimated),
        "billed_usd": money(total_billed),
        "difference_pct": _pct(total_estimated, total_billed),
        "jobs": jobs,
        "checked_at": iso(now),
    }
    if exports is not None:
        from shared.services.data_exports import DataExportError

        try:
            result["by_resource"] = reconcile_by_resource(deps, exports, day, now)
        except DataExportError as exc:  # a file it cannot read: said, and tried next run
            result["by_resource"] = {"error": str(exc), "jobs": [], "unallocated": []}
    result = bounded_reconciliation(result)
    store.put_reconciliation(day, result)
    return result


def bounded_reconciliation(result: dict[str, Any]) -> dict[str, Any]:
    """At most ``RECONCILED_JOBS`` jobs, those furthest from the bill, in job order; the
    rest counted and summed (``jobs_count``, ``other_jobs``), so that a day of 10,000
    jobs is a bounded document (and a bounded API answer)."""
    jobs: dict[str, Any] = result["jobs"]
    if len(jobs) <= RECONCILED_JOBS:
        return result
    ranked = sorted(jobs, key=lambda j: (-abs(Decimal(jobs[j]["difference_usd"])), j))
    kept, rest = set(ranked[:RECONCILED_JOBS]), ranked[RECONCILED_JOBS:]
    return {
        **result,
        "jobs": {j: row for j, row in jobs.items() if j in kept},
        "jobs_count": len(jobs),
        "other_jobs": {
            "count": len(rest),
            "estimated_usd": money(
                sum((Decimal(jobs[j]["estimated_usd"]) for j in rest), Decimal(0))
            ),
            "billed_usd": money(sum((Decimal(jobs[j]["billed_usd"]) for j in rest), Decimal(0))),
        },
    }


def reconcile_recent(
    deps: LedgerDeps,
    store: ReconciliationStore,
    config: LedgerConfig,
    bills: BillSource,
    now: datetime,
    exports: LineSource | None = None,
) -> list[dict[str, Any]]:
    """Every day from ``settle_days`` ago back a week that is not yet confirmed."""
    newest = now.date() - timedelta(days=config.reconcile.settle_days)
    days = [newest - timedelta(days=n) for n in range(7)]
    return [reconcile_day(deps, store, config, bills, day, now, exports) for day in reversed(days)]
