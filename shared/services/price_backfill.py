"""Hourly: price what was unpriced, and tell admins, once a day per price, what is missing.

A segment with no known rate keeps its seconds; the moment an override or the
Price List knows the rate, this run prices it (head, sealed record and the job's
rollup in one transaction) and the job's cost is complete.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.adapters.checkpoint_store import CheckpointStore
from shared.adapters.instance_store import SealedSegment
from shared.adapters.notify import Alert, Notifier
from shared.adapters.outbox import OutboxStore
from shared.adapters.rollup_store import PAST_CHANGES, RollupChange
from shared.adapters.table import ConditionFailed
from shared.adapters.unit_of_work import UnitOfWork
from shared.adapters.unpriced import Unpriced, unpriced_records
from shared.domain import accrual as acc
from shared.domain.checkpoint import CheckpointHead, object_accrual, version_accrual
from shared.domain.instance import InstanceHead, head_accrual
from shared.domain.segments import SegmentCost, price_span, segment_accrual
from shared.reports.formatting import iso
from shared.services.alerts import AlertPoster
from shared.services.deps import LedgerDeps


@dataclass(frozen=True)
class BackfillResult:
    repriced: tuple[str, ...]
    missing: tuple[str, ...]
    alerted: tuple[str, ...]


def _reprice(deps: LedgerDeps, head: InstanceHead, cost: SegmentCost) -> SegmentCost:
    pin = deps.prices.pin_for(head.profile, cost.span)
    if pin is None:
        return cost
    return price_span(
        head.instance_id,
        cost.span,
        pin,
        deps.prices.series,
        hourly=head.profile.hourly_billing,
        unpriced_key=head.profile.unpriced_key(),
    )


def _commit(
    deps: LedgerDeps, old: InstanceHead, new: InstanceHead, sealed: list[SegmentCost]
) -> bool:
    uow = UnitOfWork(deps.table)
    deps.instances.stage_head(uow, new, old.version)
    for cost in sealed:
        uow.add(deps.instances.sealed_segment(new, cost))
    delta = head_accrual(new).minus(head_accrual(old))
    rollup = RollupChange(job_id=new.job_id, account=new.account, delta=delta)
    rollup.counters[PAST_CHANGES] = 1
    rollup.add_strings["price_sources"] = {c.pin.provenance for c in sealed if c.pin} | {
        s.pin.provenance for s in new.segments if s.pin
    }
    deps.rollups.stage(uow, rollup)
    try:
        uow.commit()
    except ConditionFailed:  # the stores forgot what was read; the next run tries again
        return False
    return True


def _backfill_head(deps: LedgerDeps, head: InstanceHead) -> bool:
    segments = [s if s.priced else _reprice(deps, head, s) for s in head.segments]
    rates = deps.prices.volume_rates(head.profile)
    merged = tuple(
        new if (old is None or old.size is None) else old
        for new, old in zip(rates, [*head.volume_rates, *[None] * len(rates)], strict=False)
    )
    new = head.model_copy(update={"segments": tuple(segments), "volume_rates": merged})
    if new == head:
        return False
    changed = [s for s, o in zip(segments, head.segments, strict=True) if s != o and s.closed]
    return _commit(deps, head, new, changed)


def _backfill_sealed(deps: LedgerDeps, record: SealedSegment) -> bool:
    cost = record.cost
    head = deps.instances.stored_head_of(record)
    if head is None:
        return False
    if any(s.span.key == cost.span.key for s in head.segments):
        return False  # still in the window: priced with its head
    priced = _reprice(deps, head, cost)
    if not priced.priced:
        return False
    sealed = (
        acc.from_attributes(head.sealed).add(segment_accrual(cost), -1).add(segment_accrual(priced))
    )
    new = head.model_copy(update={"sealed": acc.to_attributes(sealed)})
    return _commit(deps, head, new, [priced])


def _backfill_checkpoint(deps: LedgerDeps, store: CheckpointStore, head: CheckpointHead) -> bool:
    rate = deps.prices.s3_rate(head.region)
    if rate is None:
        return False
    priced = head.model_copy(update={"rate": rate})
    # Versions that left the head are sealed records: price them from their spans.
    in_head = {v.write_event_id for v in head.versions}
    sealed = acc.Accrual()
    for version in store.sealed_versions(head):
        if version.write_event_id not in in_head:
            sealed.add(version_accrual(priced, version))
    new = priced.model_copy(update={"sealed": acc.to_attributes(sealed)})
    uow = UnitOfWork(deps.table)
    store.stage_head(uow, new, head.version)
    delta = object_accrual(new).minus(object_accrual(head))
    deps.rollups.stage(
        uow,
        RollupChange(
            job_id=head.job_id, account=head.account, delta=delta, counters={PAST_CHANGES: 1}
        ),
    )
    try:
        uow.commit()
    except ConditionFailed:
        return False
    return True


def _backfill_order(record: Unpriced) -> int:
    return 0 if isinstance(record, SealedSegment) else 1 if isinstance(record, InstanceHead) else 2


def backfill_prices(
    deps: LedgerDeps, notifier: Notifier, checkpoints: CheckpointStore
) -> BackfillResult:
    """Price what was unpriced (instances, sealed segments, checkpoint objects in
    ``checkpoints``); one admin alert a day per price still missing."""
    now = deps.clock.now()
    repriced: list[str] = []
    missing: dict[str, list[str]] = {}
    # Sealed segments first: a head's own check then sees what this run priced.
    for record in sorted(unpriced_records(deps.table), key=_backfill_order):
        if isinstance(record, InstanceHead):
            head = deps.instances.head(record.job_id, record.account, record.instance_id) or record
            if _backfill_head(deps, head):
                repriced.append(head.instance_id)
                head = deps.instances.head(head.job_id, head.account, head.instance_id) or head
            a = head_accrual(head)
            for component in {c for (c, _, _) in a.terms if c.startswith("unpriced:")}:
                if a.value(component, now) > 0:
                    missing.setdefault(component.removeprefix("unpriced:"), []).append(
                        head.instance_id
                    )
        elif isinstance(record, SealedSegment):
            if _backfill_sealed(deps, record):
                repriced.append(f"{record.instance_id} (sealed)")
        elif _backfill_checkpoint(deps, checkpoints, record):
            repriced.append(f"s3://{record.bucket}/{record.key}")
        else:
            missing.setdefault(f"s3:standard:{record.region}", []).append(
                f"s3://{record.bucket}/{record.key}"
            )
    alerted = []
    poster = AlertPoster(OutboxStore(deps.table), notifier)
    for key, instances in sorted(missing.items()):
        kind, name, region = key.split(":")
        alert = Alert(
            audience="admin",
            kind="missing_price",
            subject=f"No {kind} price for {name} in {region}",
            message=(
                f"No price is known for {kind} {name} in {region}. Affected: "
                f"{', '.join(sorted(set(instances)))}. Their running time is kept and will "
                "be priced as soon as a price is configured (CDK context prices.*) or the "
                "Price List API lists one; until then their jobs show their cost as "
                "'at least' and incomplete."
            ),
            attributes={"severity": "warning", "region": region, "price_key": name},
            # once a day per missing price while it is missing
            alert_id=f"missing_price:{key}:{now.date().isoformat()}",
            at=iso(now) or "",
        )
        if poster.post(alert, now) != "known":
            alerted.append(key)
    return BackfillResult(tuple(repriced), tuple(sorted(missing)), tuple(alerted))
