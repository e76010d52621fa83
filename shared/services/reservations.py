"""Capacity Blocks and ODCRs in the ledger (docs/cost-rules.md "Managed training and reserved
capacity").

- A reservation is learnt (DescribeCapacityReservations) when an instance in one is first
  seen, and refreshed by the daily schedule; its head (``RES#<account>#<id>``) holds its
  rate per reserved instance-hour: a block's fee (configured per reservation id, else a
  configured $/instance-hour of its type) spread over its reserved instance-seconds, an
  ODCR's on-demand rate. Unknown: unpriced, never 0.
- An instance in a Capacity Block is priced at that share, per second with no minimum
  (``pin_for``, the price book's ``block_pin``); an ODCR's instances at the on-demand rate.
- Each change of an instance in a reservation also records its running spans on the
  reservation's head and moves the unused reserved time (``wasted_reserved``) on the rollup
  of the reservation's job (its job tag, else ``reservation:<id>``), in the same transaction.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from functools import partial
from typing import TYPE_CHECKING

from shared.adapters.managed_store import ReservationStore
from shared.adapters.reservations import (
    CapacityReservations,
    ReservationNotFound,
    needs_refresh,
)
from shared.adapters.rollup_store import RollupChange, RollupStore
from shared.adapters.table import Table
from shared.adapters.unit_of_work import UnitOfWork
from shared.config.ledger import LedgerConfig
from shared.domain.accrual import Accrual
from shared.domain.base import Rate, RateSource
from shared.domain.clock import SECONDS_PER_HOUR
from shared.domain.instance import InstanceHead, InstanceProfile
from shared.domain.lifecycle import Span
from shared.domain.managed.models import CapacityReservation
from shared.domain.managed.reservation import ReservationHead, reserved_until, wasted_accrual
from shared.domain.managed.reservation_cost import block_fee, reservation_job_id
from shared.domain.rates import RatePin
from shared.domain.segments import SegmentCost
from shared.domain.tags import grouping_tags
from shared.services.versioned import ConcurrentUpdates, commit, versioned_update

if TYPE_CHECKING:
    from shared.adapters.pricing import PriceBook

logger = logging.getLogger("costtracker.reservations")


@dataclass(frozen=True)
class ReservationUpdate:
    """A reservation head to write (over ``expected``, None: none yet; ``indexed``: the
    daily refresh still looks at it) and the change it makes to its job's rollup."""

    head: ReservationHead
    expected: int | None
    indexed: bool
    change: RollupChange


class ReservationLedger:
    """Reservation heads: learnt, priced, and kept in step with the instances in them."""

    def __init__(
        self,
        store: ReservationStore,
        source: Callable[[], CapacityReservations],
        config: LedgerConfig,
        prices: PriceBook,
    ) -> None:
        self.store = store
        self._source = source
        self.config = config
        self.prices = prices
        # Described but not yet written (the first instance event writes it).
        self._pending: dict[tuple[str, str], ReservationHead] = {}

    # -- learning and pricing ---------------------------------------------------------------
    def rate_of(
        self, reservation: CapacityReservation, region: str
    ) -> tuple[Rate | None, Decimal | None]:
        """(rate per reserved instance-hour, the block's fee) from configuration and prices."""
        as_of = self.config.prices.as_of or self.prices.today
        if reservation.kind == "capacity-block":
            fee = block_fee(
                reservation,
                fees_by_id=self.config.reservations.fees,
                hourly_by_type=self.config.reservations.block_hourly,
            )
            seconds = reservation.instance_count * (reservation.block_seconds or 0)
            if fee is None or seconds <= 0:
                return None, fee
            hourly = fee * SECONDS_PER_HOUR / seconds
            rate = Rate(
                list_usd=hourly,
                effective_usd=hourly,
                source=RateSource.OVERRIDE,
                checked_on=as_of,
                region=region,
                note=f"capacity block {reservation.reservation_id}: fee {fee} over "
                f"{seconds} reserved instance-seconds",
            )
            return rate, fee
        on_demand = self.prices.on_demand(
            region, reservation.instance_type, reservation.instance_platform
        )
        return on_demand, None

    def build(self, reservation: CapacityReservation, region: str) -> ReservationHead:
        rate, fee = self.rate_of(reservation, region)
        return ReservationHead(
            reservation=reservation,
            job_id=reservation_job_id(reservation, self.config.tracking.job_tag_keys),
            region=region,
            rate=rate,
            fee_usd=fee,
        )

    def head_for(self, account: str, reservation_id: str, region: str) -> ReservationHead | None:
        """The reservation's head: stored, pending, or described now (None: EC2 does not
        know it; its instances are then priced as the usual rules say, and a block's
        instances are unpriced)."""
        key = (account, reservation_id)
        if key in self._pending:
            return self._pending[key]
        found = self.store.head(account, reservation_id)
        if found is not None:
            return found
        try:
            described = self._source().describe(reservation_id, account=account, region=region)
        except ReservationNotFound as exc:
            logger.warning("reservation not found", extra={"error": str(exc)})
            return None
        if not described.account:
            described = described.model_copy(update={"account": account})
        head = self.build(described, region)
        self._pending[key] = head
        return head

    def pin_for(self, profile: InstanceProfile, span: Span) -> RatePin | None:
        """A Capacity Block instance's rate: its share of the block's fee, per second."""
        if not profile.capacity_reservation_id:
            return None
        head = self.head_for(profile.account, profile.capacity_reservation_id, profile.region)
        if head is None or head.rate is None:
            return None
        return RatePin.for_rate(head.rate, per_second=True)

    # -- instance changes -------------------------------------------------------------------
    def instance_change(
        self, head: InstanceHead, void: list[SegmentCost]
    ) -> ReservationUpdate | None:
        """The reservation head and rollup change that follow an instance head's change."""
        profile = head.profile
        if not profile.capacity_reservation_id:
            return None
        old = self.head_for(profile.account, profile.capacity_reservation_id, profile.region)
        if old is None:
            return None
        spans = [(s.span.key, s.span.start, s.span.end) for s in head.segments]
        new = old.with_spans(profile.instance_id, head.job_id, spans, {c.span.key for c in void})
        stored = self.store.head(old.account, old.reservation_id) is not None
        if stored and new.spans == old.spans:
            return None
        return self._update(old if stored else None, new, old.version if stored else None)

    def _update(
        self,
        old: ReservationHead | None,
        new: ReservationHead,
        expected: int | None,
        indexed: bool = True,
    ) -> ReservationUpdate:
        delta = wasted_accrual(new)
        if old is not None:
            delta = delta.minus(wasted_accrual(old))
        change = RollupChange(job_id=new.job_id, account=new.account, delta=delta)
        change.at_least["reserved_until"] = reserved_until(new)
        times = [new.reservation.start] + [t for s in new.spans for t in (s.start, s.end) if t]
        change.at_least["last_event_at"] = max(times).isoformat()
        change.at_most["first_event_at"] = new.reservation.start.isoformat()
        change.at_most["started_at"] = new.reservation.start.isoformat()
        tags = grouping_tags(new.reservation.tags, self.config)
        change.tags = tags
        change.tags_from = f"{new.reservation.start.isoformat()}#{new.reservation_id}"
        change.add_strings["tag_values"] = {f"{k}={v}" for k, v in tags.items()}
        change.add_strings["reservations"] = {f"{new.account}#{new.reservation_id}"}
        if new.rate is not None:
            change.add_strings["price_sources"] = {new.rate.provenance}
        return ReservationUpdate(new, expected, indexed, change)

    def stage(
        self,
        uow: UnitOfWork,
        rollups: RollupStore,
        update: ReservationUpdate,
        main: RollupChange | None = None,
    ) -> None:
        """Stage the reservation's head and its rollup change (merged into ``main``, an
        instance event's own change, when both are the same rollup). Written or refused,
        the head is no longer pending: the store holds it, or the next read finds it."""
        head = update.head
        self.store.stage(uow, head, update.expected, indexed=update.indexed)
        settled = partial(self._settled, head.account, head.reservation_id)
        uow.add(None, on_commit=settled, on_conflict=settled)
        change = update.change
        if main is None or (change.job_id, change.account) != (main.job_id, main.account):
            rollups.stage(uow, change)
            return
        # a copy: the instance's own accrual may be the same object (kept by its store)
        main.delta = main.delta.minus(Accrual()).add(change.delta)
        for name, value in change.at_least.items():
            main.at_least[name] = max(main.at_least.get(name, value), value)
        for name, value in change.at_most.items():
            main.at_most[name] = min(main.at_most.get(name, value), value)
        for name, values in change.add_strings.items():
            main.add_strings[name] = main.add_strings.get(name, set()) | values

    def _settled(self, account: str, reservation_id: str) -> None:
        self._pending.pop((account, reservation_id), None)

    def save(
        self,
        rollups: RollupStore,
        table: Table,
        new: ReservationHead,
        now: datetime | None = None,
    ) -> None:
        """Write a reservation head on its own (the daily refresh, a block event); at the
        refresh (``now``) one that no longer needs refreshing leaves the refresh's index."""
        indexed = True if now is None else needs_refresh(new.reservation, now)

        def attempt(_: int) -> None:
            old = self.store.head(new.account, new.reservation_id)
            merged = (
                new
                if old is None
                else new.model_copy(
                    update={
                        "spans": old.spans,
                        "notes": tuple(dict.fromkeys((*old.notes, *new.notes))),
                    }
                )
            )
            same = old is not None and merged.model_dump(exclude={"version"}) == old.model_dump(
                exclude={"version"}
            )
            if same and indexed:
                return
            update = self._update(old, merged, old.version if old is not None else None, indexed)
            uow = UnitOfWork(table)
            self.stage(uow, rollups, update)
            commit(uow)

        # A head that keeps losing races is left as it is: the next refresh or event writes it.
        with contextlib.suppress(ConcurrentUpdates):
            versioned_update(attempt, new.reservation_id)
