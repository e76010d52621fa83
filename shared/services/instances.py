"""EC2 state changes and spot notices into the ledger: one transaction per event.

Each event reads the instance's pointer and head (kept warm in the container),
folds the event into the head by event time, and writes the head, any segment
that closed or changed, and the job's rollup change together (at most three
items for an event on an instance the ledger knows; a first sight adds the
pointer in place of a segment). A duplicate writes nothing; a failed write
writes nothing, so Lambda's retry finds the work undone, never half done.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from shared.adapters.instance_store import Pointer
from shared.adapters.inventory import InstanceNotFound
from shared.adapters.rollup_store import PAST_CHANGES, RollupChange
from shared.adapters.table import ConditionFailed
from shared.adapters.unit_of_work import UnitOfWork
from shared.config.ledger import LedgerConfig
from shared.domain.accrual import Accrual
from shared.domain.clock import day_start, utc
from shared.domain.instance import (
    Change,
    CostWarning,
    InstanceHead,
    InstanceProfile,
    head_accrual,
    is_very_late,
    refold,
    seen,
)
from shared.domain.lifecycle import BILLING_STATES, Notice, Transition
from shared.domain.tags import grouping_tags, tag_warnings
from shared.services.deps import LedgerDeps
from shared.services.versioned import commit, versioned_update

logger = logging.getLogger("costtracker.instances")
UNTRACKED_TTL_SECONDS = 30 * 86400


@dataclass(frozen=True)
class Outcome:
    """What an event did: ``applied``, ``duplicate``, ``untracked`` or ``ignored``."""

    result: str
    instance_id: str
    job_id: str | None = None
    account: str = ""
    detail: str = ""
    # The head as written (applied events only); not part of the handler's answer.
    head: InstanceHead | None = field(default=None, repr=False, compare=False)

    def answer(self) -> dict[str, str | None]:
        return {
            "result": self.result,
            "instance_id": self.instance_id,
            "job_id": self.job_id,
            "account": self.account,
            "detail": self.detail,
        }


def _profile(
    deps: LedgerDeps, account: str, instance_id: str, region: str
) -> tuple[InstanceProfile, bool]:
    """What EC2 says of the instance; an instance EC2 cannot describe is kept from what
    the events say (type unknown), marked inferred."""
    try:
        profile = deps.inventory.describe(instance_id, region, account)
    except InstanceNotFound:
        return (
            InstanceProfile(
                instance_id=instance_id, instance_type="unknown", region=region, account=account
            ),
            True,
        )
    # The event's account keys every record of the instance (it is the one EC2 named).
    return profile.model_copy(update={"account": account or profile.account}), False


def _new_head(
    deps: LedgerDeps, account: str, instance_id: str, region: str, now: datetime
) -> tuple[InstanceHead | None, Pointer]:
    profile, inferred = _profile(deps, account, instance_id, region)
    if inferred:
        job_id: str | None = f"untagged:{instance_id}"
    else:
        job_id = deps.config.tracking.job_of(instance_id, profile.instance_type, profile.tags)
    pointer = Pointer(account, instance_id, job_id)
    if job_id is None:
        return None, pointer
    warnings = list(tag_warnings(profile.tags, deps.config))
    if inferred:
        warnings.append(
            CostWarning(
                kind="inferred_instance",
                detail=f"EC2 could not describe {instance_id}: tracked from its events as "
                f"untagged:{instance_id}, type unknown, unpriced",
            )
        )
    head = InstanceHead(
        profile=profile,
        job_id=job_id,
        inferred=inferred,
        volume_rates=deps.prices.volume_rates(profile),
        warnings=tuple(warnings),
    )
    return head, pointer


def rollup_change(
    old: InstanceHead | None,
    new: InstanceHead,
    config: LedgerConfig,
    now: datetime,
    event_at: datetime,
    old_accrual: Accrual | None = None,
    new_accrual: Accrual | None = None,
) -> RollupChange:
    """The job rollup's change when an instance head changes from ``old`` to ``new``."""
    delta = new_accrual if new_accrual is not None else head_accrual(new)
    if old is not None:
        delta = delta.minus(old_accrual if old_accrual is not None else head_accrual(old))
    change = RollupChange(job_id=new.job_id, account=new.account, delta=delta)
    first = new.first_running_at.isoformat() if new.first_running_at else None
    if first is not None:
        change.at_most["started_at"] = first
    if new.last_running_at is not None:
        change.at_least["last_running_at"] = new.last_running_at.isoformat()
    if new.last_warning_at is not None:
        change.at_least["last_warning_at"] = new.last_warning_at.isoformat()
    change.at_least["last_event_at"] = change.at_most["first_event_at"] = event_at.isoformat()
    tags = grouping_tags(new.profile.tags, config)
    change.tags = tags
    change.tags_from = f"{first or '9999'}#{new.instance_id}"  # ties by instance id alone
    change.add_strings["tag_values"] = {f"{k}={v}" for k, v in tags.items()}
    sources = {s.pin.provenance for s in new.segments if s.pin is not None}
    sources |= {r.size.provenance for r in new.volume_rates if r.size is not None}
    if sources:
        change.add_strings["price_sources"] = sources
    if new.warnings != (old.warnings if old else ()):
        change.add_strings["warning_kinds"] = {w.kind for w in new.warnings}
    if event_at < day_start(now):
        change.counters["late_events"] = 1
        change.counters[PAST_CHANGES] = 1
    return change


def apply_to_instance(
    deps: LedgerDeps,
    *,
    account: str,
    instance_id: str,
    region: str,
    event_id: str,
    event_at: datetime,
    change_head: Callable[[InstanceHead], Change | None],
    create_inferred: bool = True,
) -> Outcome:
    """Read (or describe and create) the head, apply one change, write it all at once."""
    now = deps.clock.now()

    def attempt(_attempt: int) -> Outcome:
        uow = UnitOfWork(deps.table)
        pointer = deps.instances.pointer(account, instance_id)
        new_pointer = None
        if pointer is None:
            created, pointer = _new_head(deps, account, instance_id, region, now)
            if created is not None and created.inferred and not create_inferred:
                return Outcome("ignored", instance_id, None, account, "EC2 does not know it")
            new_pointer = pointer
            if created is None:
                expires = int(now.timestamp()) + UNTRACKED_TTL_SECONDS
                deps.instances.stage_pointer(uow, pointer, expires)
                with contextlib.suppress(ConditionFailed):  # another event recorded it first
                    uow.commit()
                return Outcome("untracked", instance_id, None, account)
            old: InstanceHead | None = None
            head = created
            expected: int | None = None
        elif pointer.job_id is None:
            return Outcome("untracked", instance_id, None, account)
        else:
            found = deps.instances.head(pointer.job_id, account, instance_id)
            if found is None:  # pointer without head: a crash between two writes cannot
                found, _ = _new_head(deps, account, instance_id, region, now)  # happen, but heal
                if found is None:
                    return Outcome("untracked", instance_id, None, account)
                old, head, expected = None, found, None
            else:
                old, head, expected = found, found, found.version
        if seen(head, event_id):
            return Outcome("duplicate", instance_id, head.job_id, account)
        result = change_head(head)
        if result is None:
            return Outcome("ignored", instance_id, head.job_id, account, "nothing to change")
        if new_pointer is not None:
            deps.instances.stage_pointer(uow, new_pointer)
        old_accrual = deps.instances.accrual(old) if old is not None else None
        new_accrual = head_accrual(result.head)
        deps.instances.stage_head(uow, result.head, expected, new_accrual)
        written = [deps.instances.sealed_segment(result.head, cost) for cost in result.write]
        uow.extend(written)
        rewritten = {op.key for op in written}
        for cost in result.void:  # a record whose key did not change is simply rewritten
            void = deps.instances.sealed_segment(result.head, cost, void=True)
            if void.key not in rewritten:
                uow.add(void)
        for notice in result.seal_notices:
            uow.add(deps.instances.notice_item(result.head, notice))
        main = rollup_change(old, result.head, deps.config, now, event_at, old_accrual, new_accrual)
        _stage_reservation(deps, uow, result, main)
        deps.rollups.stage(uow, main)
        commit(uow)
        return Outcome("applied", instance_id, result.head.job_id, account, head=result.head)

    return versioned_update(attempt, instance_id)


def _stage_reservation(
    deps: LedgerDeps, uow: UnitOfWork, result: Change, main: RollupChange
) -> None:
    """An instance in a capacity reservation also moves the reservation's head and its
    unused time (``shared.services.reservations``), in the same transaction."""
    if deps.reservations is None or not result.head.profile.capacity_reservation_id:
        return
    update = deps.reservations.instance_change(result.head, result.void)
    if update is not None:
        deps.reservations.stage(uow, deps.rollups, update, main)


def record_state_change(
    deps: LedgerDeps,
    *,
    event_id: str,
    at: datetime,
    instance_id: str,
    state: str,
    region: str,
    account: str,
    inferred: bool = False,
) -> Outcome:
    """Fold one EC2 state change into the instance's head (cost rule 1)."""
    if state not in BILLING_STATES:
        return Outcome("ignored", instance_id, detail=f"{state} bills nothing")
    transition = Transition(event_id=event_id, at=utc(at), state=state, inferred=inferred)

    def change(head: InstanceHead) -> Change | None:
        if is_very_late(head, transition):
            return _very_late(deps, head, transition)
        return refold(
            head,
            (*head.window, transition),
            head.notices,
            deps.prices.pin_for,
            deps.prices.series,
        )

    return apply_to_instance(
        deps,
        account=account,
        instance_id=instance_id,
        region=region,
        event_id=event_id,
        event_at=transition.at,
        change_head=change,
    )


def _very_late(deps: LedgerDeps, head: InstanceHead, transition: Transition) -> Change | None:
    """An event older than everything the head still holds: folded against the sealed
    segments it may change (read back from the job's partition)."""
    from shared.services.refold import widen_and_refold

    return widen_and_refold(deps, head, transition)


def record_spot_notice(
    deps: LedgerDeps,
    *,
    event_id: str,
    at: datetime,
    instance_id: str,
    action: str,
    region: str,
    account: str,
) -> Outcome:
    """A spot interruption warning or rebalance recommendation on the instance's head.
    A hibernate warning changes how segments fold (billed through ``stopping``)."""
    notice = Notice(event_id=event_id, at=utc(at), action=action)

    def change(head: InstanceHead) -> Change | None:
        updated = head.model_copy(
            update={
                "interruptions": head.interruptions + (1 if notice.is_interruption else 0),
                "rebalances": head.rebalances + (0 if notice.is_interruption else 1),
                "last_warning_at": max(
                    [
                        x
                        for x in (
                            head.last_warning_at,
                            notice.at if notice.is_interruption else None,
                        )
                        if x
                    ],
                    default=None,
                ),
            }
        )
        result = refold(
            updated,
            updated.window,
            (*head.notices, notice),
            deps.prices.pin_for,
            deps.prices.series,
        )
        if notice.is_interruption:
            result.seal_notices.append(notice)
        return result

    return apply_to_instance(
        deps,
        account=account,
        instance_id=instance_id,
        region=region,
        event_id=event_id,
        event_at=notice.at,
        change_head=change,
    )


def accrual_of_heads(heads: list[InstanceHead]) -> Accrual:
    out = Accrual()
    for head in heads:
        out.add(head_accrual(head))
    return out
