"""The tracker's utilization alarms: made while an instance runs and retired once it has
stopped, each in the instance's own account and region (where its metrics are), with
a record of what was put (``shared.adapters.alarm_store``) so that only that alarm speaks
for the instance (``shared.services.alarm_identity``); and the hourly sweep, which
deletes the retired alarms in CloudWatch (up to 100 names a call) and those of
instances no longer running whose stop was missed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from itertools import islice
from typing import TypeVar

from aws_lambda_powertools import Logger

from shared.adapters.alarm_store import AlarmStore, LiveAlarm, RetiredAlarm
from shared.adapters.alarms import AlarmManager, AlarmSpec, alarm_specs
from shared.adapters.inventory import InstanceNotFound
from shared.config.ledger import UtilizationConfig
from shared.domain.alarm_record import AlarmIdentity, PutAlarm
from shared.domain.clock import utc
from shared.domain.idle import Signal
from shared.domain.instance import InstanceHead, fold_with
from shared.domain.lifecycle import Transition
from shared.events.envelope import INSTANCE_ID_PATTERN
from shared.services.deps import LedgerDeps

logger = Logger(service="costtracker", child=True)
SweptAlarm = TypeVar("SweptAlarm", bound=LiveAlarm)

# At most this many retired alarms are deleted by one sweep (10 DeleteAlarms calls): the
# rest wait for the next hour, so no sweep grows with the stops of a fleet.
RETIRED_PER_SWEEP = 1000


def sync_alarms(
    deps: LedgerDeps,
    alarms: AlarmManager,
    *,
    event_id: str,
    at: datetime,
    instance_id: str,
    state: str,
    region: str,
    account: str,
) -> str:
    """Make the instance's alarms while it runs, retire them once it has stopped, in
    the instance's own account and region (where its metrics are). What is put is
    recorded first (so that the alarm's first state change finds it), its request's
    digest once CloudWatch has accepted it. Retiring is a record only (its state
    changes from then on are not the tracker's): the hourly sweep deletes the retired
    alarms in CloudWatch, 100 names a call (``delete_retired_alarms``). A restart before
    then deletes them first, so that they are made anew (a put over an existing alarm
    keeps its state). The records spare the round trips: an alarm whose accepted request
    is this very one, not deleted since, is not put again (a duplicate ``running``), and
    alarms both retired are not retired again (``stopping`` then ``stopped``). A put
    that failed leaves no digest, so the event's retry puts again.

    Decided on what the ledger knows of the instance plus this event, so a late
    ``running`` after ``terminated`` does not resurrect alarms.
    """
    pointer = deps.instances.pointer(account, instance_id)
    head: InstanceHead | None = None
    if pointer is not None:
        if pointer.job_id is None:
            return "untracked"
        head = deps.instances.head(pointer.job_id, account, instance_id)
    if head is None:
        try:
            profile = deps.inventory.describe(instance_id, region, account)
        except InstanceNotFound:
            return "untracked"
        if deps.config.tracking.job_of(instance_id, profile.instance_type, profile.tags) is None:
            return "untracked"
        head = InstanceHead(profile=profile, job_id="")
    config = deps.config.utilization
    specs = alarm_specs(
        config,
        instance_id,
        head.profile.instance_type,
        account=head.profile.account or account,
        region=head.profile.region or region,
    )
    if not specs:
        return "no_accelerator"
    transition = Transition(event_id=event_id, at=utc(at), state=state)
    folded = fold_with(head, transition)
    store = AlarmStore(deps.table)
    now = deps.clock.now()
    records = [store.get(s.account, s.region, s.name) for s in specs]
    if folded.open is not None:
        # An alarm whose record holds this very request, not deleted since, is in place.
        to_put: list[tuple[AlarmSpec, AlarmIdentity, PutAlarm | None]] = []
        for spec, record in zip(specs, records, strict=True):
            identity = spec.identity(config)  # made once: compared, recorded, confirmed
            if not _in_place(record, spec, identity, config):
                to_put.append((spec, identity, record))
        pending = [spec.name for spec, _, r in to_put if r is not None and r.delete_pending]
        if pending:  # retired, still in CloudWatch: made anew, its state starting over
            alarms.delete(pending, specs[0].account, specs[0].region)
        for spec, identity, record in to_put:
            put = PutAlarm(
                identity=identity,
                instance_id=instance_id,
                signal=spec.signal,
                put_at=now,
            )
            store.put(put, replacing=record)  # first: the alarm's first state change needs it
        if to_put:
            alarms.ensure([spec for spec, _, _ in to_put], config)
            for spec, identity, _ in to_put:  # then what CloudWatch accepted: a failed put
                store.confirmed(identity, spec.definition(config))  # is retried
        return "created"
    if all(r is not None and r.deleted_at is not None for r in records):
        return "retired"  # the tracker retired both already (e.g. stopping, then stopped)
    unrecorded = [spec.name for spec, record in zip(specs, records, strict=True) if not record]
    if unrecorded:  # put before records were kept: nothing for the sweep to find
        alarms.delete(unrecorded, specs[0].account, specs[0].region)
    for spec, record in zip(specs, records, strict=True):
        if record is not None and record.deleted_at is None:
            store.retired(spec, now)  # the record is named by where it is
    return "retired"


def _in_place(
    record: PutAlarm | None, spec: AlarmSpec, identity: AlarmIdentity, config: UtilizationConfig
) -> bool:
    """Whether ``record`` is a live alarm put with exactly ``spec``'s request (its
    ``identity`` and digest: ARN, metric, threshold and every other field)."""
    return (
        record is not None
        and record.deleted_at is None
        and record.definition == spec.definition(config)
        and record.identity == identity
    )


def sweep_alarms(
    deps: LedgerDeps, alarms: AlarmManager, open_heads: Sequence[InstanceHead] | None = None
) -> list[str]:
    """Delete our alarms whose instance is not running in the ledger (missed stop events):
    those the tracker recorded putting, in their own account and region, and any under
    the tracker's prefix in its own account that it holds no record of (made before it
    kept records, or put after their delete), listed once a day (``CENSUS_EVERY``: the
    listing grows with the alarms in place, the records already know the rest).
    ``open_heads``: the open instances if the caller already read them (one Query,
    paged)."""
    prefix = deps.config.utilization.alarm_prefix
    heads = deps.instances.open_heads() if open_heads is None else open_heads
    running = {(h.account, h.instance_id) for h in heads}
    store = AlarmStore(deps.table)
    now = deps.clock.now()
    orphans: list[str] = []
    stopped = (a for a in store.live_alarms() if (a.account, a.instance_id) not in running)
    for alarm in _deleted_by_place(alarms, stopped, "orphan alarms not deleted"):
        store.deleted(alarm, now)
        orphans.append(alarm.arn)
    if not store.census_due("", "", now):
        return orphans
    running_ids = {iid for _, iid in running}
    unrecorded = []
    for name in alarms.managed(prefix):
        parsed = alarm_of_name(name, prefix)
        if parsed is not None and parsed[0] not in running_ids:
            unrecorded.append(name)
    if unrecorded:
        alarms.delete(unrecorded)
    store.census_taken("", "", now)
    return orphans + unrecorded


def delete_retired_alarms(deps: LedgerDeps, alarms: AlarmManager) -> list[str]:
    """Delete in CloudWatch the alarms retired at their instance's stop, grouped by
    account and region, 100 names a call (``RETIRED_PER_SWEEP`` at most; the ARNs
    deleted). A record put again while the delete ran (a restart) may have lost its
    fresh alarm to it: that alarm is put again if its instance runs. One account that
    fails is logged and never stops the others."""
    store = AlarmStore(deps.table)
    retired = islice(store.retired_alarms(), RETIRED_PER_SWEEP)
    deleted: list[str] = []
    put_again: list[RetiredAlarm] = []
    for alarm in _deleted_by_place(alarms, retired, "retired alarms not deleted"):
        if store.deleted_in_cloudwatch(alarm):
            deleted.append(alarm.arn)
        else:
            put_again.append(alarm)
    for alarm in put_again:
        _put_again(deps, alarms, alarm)
    return deleted


def _deleted_by_place(
    alarms: AlarmManager, found: Iterable[SweptAlarm], failure: str
) -> Iterator[SweptAlarm]:
    """Delete ``found`` in CloudWatch grouped by account and region (in that order; the
    adapter sends 100 names a call), yielding each alarm of a place once its delete is
    done. One account that fails is logged (``failure``) and never stops the others."""
    by_place: dict[tuple[str, str], list[SweptAlarm]] = {}
    for alarm in found:
        by_place.setdefault((alarm.account, alarm.region), []).append(alarm)
    for (account, region), group in sorted(by_place.items()):
        try:
            alarms.delete([a.name for a in group], account, region)
        except Exception:  # one account that fails never stops the others
            logger.exception(failure, extra={"account": account})
            continue
        yield from group


def _put_again(deps: LedgerDeps, alarms: AlarmManager, alarm: RetiredAlarm) -> None:
    """Put again the alarm of a running instance that a sweep's delete may have removed
    just after its restart put it (a put over an alarm in place changes nothing). Its
    instance as the ledger knows it now: the restart is newer than the sweep's start."""
    config = deps.config.utilization
    pointer = deps.instances.pointer(alarm.account, alarm.instance_id)
    if pointer is None or pointer.job_id is None:
        return
    head = deps.instances.head(pointer.job_id, alarm.account, alarm.instance_id)
    if head is not None and head.open_segment is not None:
        specs = alarm_specs(
            config,
            alarm.instance_id,
            head.profile.instance_type,
            account=alarm.account,
            region=alarm.region,
        )
        try:
            alarms.ensure([s for s in specs if s.name == alarm.name], config)
        except Exception:  # one account that fails never stops the others
            logger.exception("alarm not put again", extra={"account": alarm.account})


def alarm_of_name(name: str, prefix: str) -> tuple[str, Signal] | None:
    """(instance id, signal) of one of the tracker's own alarms; None for anyone else's."""
    if not name.startswith(prefix):
        return None
    rest = name[len(prefix) :]
    for suffix, signal in (("-accelerator-low", "accelerator"), ("-cpu-low", "cpu")):
        if rest.endswith(suffix):
            instance_id = rest[: -len(suffix)]
            if re.fullmatch(INSTANCE_ID_PATTERN, instance_id):
                return instance_id, signal  # type: ignore[return-value]
    return None
