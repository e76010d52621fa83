"""The daily work on capacity reservations, and the Capacity Block events.

- ``refresh_reservations``: every live reservation EC2 lists and each known one that still
  needs it (``reservations_to_refresh``) is described again and its head rewritten (its
  unused time follows a changed count or end), and for the UTC day that just ended each
  reservation whose use was below ``reservations.underused_below`` gets one admin
  ``reservation_underused`` alert through the outbox, naming the job its unused time is
  charged to and the jobs that used it.
- ``note_block_event``: "Capacity Block Delivered" / "Expiration Warning" are noted on the
  block's head (learnt then if it was not known); they carry no money.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal

from shared.adapters.notify import Alert, Notifier
from shared.adapters.outbox import OutboxStore
from shared.adapters.reservations import CapacityReservations, reservations_to_refresh
from shared.domain.managed.models import CapacityReservation
from shared.domain.managed.reservation import ReservationHead
from shared.domain.managed.reservation_cost import daily_utilization, reservation_usage
from shared.reports.formatting import iso
from shared.services.alerts import AlertPoster
from shared.services.deps import LedgerDeps

logger = logging.getLogger("costtracker.reservations")


@dataclass
class RefreshResult:
    refreshed: list[str] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    alerted: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # "<account>/<region>: <error>"


def underused_alert(
    head: ReservationHead, day: date, use: Decimal, below: Decimal, now: datetime
) -> Alert:
    res = head.reservation
    start = datetime(day.year, day.month, day.day, tzinfo=res.start.tzinfo)
    usage = reservation_usage(res, head.uses(), start + timedelta(days=1), since=start)
    users = sorted(j for j, s in usage.used_by_job.items() if s)
    percent = (use * 100).quantize(Decimal(1))
    kind = "Capacity Block" if res.kind == "capacity-block" else "capacity reservation"
    wasted = ""
    if head.rate is not None:
        usd = head.rate.effective_usd * usage.unused_instance_seconds / 3600
        wasted = f" Unused reserved time that day: ${usd.quantize(Decimal('0.01')):,}."
    return Alert(
        audience="admin",
        kind="reservation_underused",
        subject=f"{kind} {res.reservation_id} used {percent} % on {day.isoformat()}",
        message=(
            f"{kind} {res.reservation_id} ({res.instance_count} x {res.instance_type}) was used "
            f"{percent} % of its reserved instance-time on {day.isoformat()} (UTC), below the "
            f"configured {(below * 100).quantize(Decimal(1))} %.{wasted} Its unused time is "
            f"charged to job {head.job_id}; used by: {', '.join(users) or 'no job'}."
        ),
        attributes={
            "reservation_id": res.reservation_id,
            "job_id": head.job_id,
            "severity": "warning",
        },
        alert_id=f"reservation_underused:{head.account}:{res.reservation_id}:{day.isoformat()}",
        at=iso(now) or "",
    )


def refresh_reservations(
    deps: LedgerDeps,
    source: CapacityReservations,
    notifier: Notifier,
    now: datetime,
    *,
    account: str,
    region: str,
) -> RefreshResult:
    """The daily refresh: the schedule's own account and region, and each other account
    and region a known reservation lives in, each read there (a member account through
    its role); one place that fails is logged and reported (``failed``), never stopping
    the others."""
    result = RefreshResult()
    ledger = deps.reservations
    if ledger is None:
        return result
    known = ledger.store.refreshed()
    places: dict[tuple[str, str], list[ReservationHead]] = {(account, region): []}
    for head in known:
        places.setdefault((head.account or account, head.region or region), []).append(head)
    for (in_account, in_region), heads in sorted(places.items()):
        try:
            _refresh_place(deps, source, now, heads, result, account=in_account, region=in_region)
        except Exception as exc:  # one account or region never stops the others
            logger.exception("reservation refresh failed", extra={"account": in_account})
            result.failed.append(f"{in_account}/{in_region}: {type(exc).__name__}")
    poster = AlertPoster(OutboxStore(deps.table), notifier)
    day = (now - timedelta(days=1)).date()
    below = deps.config.reservations.underused_below
    for head in ledger.store.refreshed():
        use = daily_utilization(head.reservation, head.uses(), day)
        if use is None or use >= below:
            continue
        if poster.post(underused_alert(head, day, use, below, now), now) != "known":
            result.alerted.append(head.reservation_id)
    return result


def _refresh_place(
    deps: LedgerDeps,
    source: CapacityReservations,
    now: datetime,
    known: list[ReservationHead],
    result: RefreshResult,
    *,
    account: str,
    region: str,
) -> None:
    """Refresh the reservations of one account and region, read there."""
    ledger = deps.reservations
    assert ledger is not None
    fresh, gone = reservations_to_refresh(
        source, [h.reservation for h in known], now, account=account, region=region
    )
    result.gone += gone
    by_id = {h.reservation_id: h for h in known}
    for reservation in fresh:
        old = by_id.get(reservation.reservation_id)
        if old is not None:
            kept = reservation.model_copy(update={"account": old.account})
            new = old.model_copy(update={"reservation": kept, "closed": _ended(kept, now)})
        else:
            if not reservation.account:
                reservation = reservation.model_copy(update={"account": account})
            new = ledger.build(reservation, region)
        ledger.save(deps.rollups, deps.table, new, now)
        result.refreshed.append(reservation.reservation_id)
    seen = {r.reservation_id for r in fresh}
    for head in known:  # ended more than a day ago, or gone: out of the refresh's index
        if head.reservation_id not in seen:
            closed = head.model_copy(update={"closed": _ended(head.reservation, now)})
            ledger.save(deps.rollups, deps.table, closed, now)


def _ended(reservation: CapacityReservation, now: datetime) -> bool:
    return reservation.end is not None and reservation.end <= now


def note_block_event(
    deps: LedgerDeps, account: str, region: str, reservation_id: str, kind: str, at: datetime
) -> str:
    """Note a Capacity Block event on its head; ``noted``, ``known`` or ``unknown``."""
    ledger = deps.reservations
    if ledger is None:
        return "unknown"
    head = ledger.head_for(account, reservation_id, region)
    if head is None:
        return "unknown"
    note = f"{kind} at {iso(at)}"
    noted = head.noted(note)
    if noted is head and ledger.store.head(account, reservation_id) is not None:
        return "known"
    ledger.save(deps.rollups, deps.table, noted)
    return "noted"
