"""Accelerator utilization: alarm lifecycle, alarm-state classification, team alerts,
and checkpoint-safe auto-stop.

Only the tracker's own alarms speak for idleness: they are read by their names
(``<prefix><instance-id>-accelerator-low`` / ``-cpu-low``). Anyone else's alarm, even
on the same metric and instance, never makes an instance idle and never stops it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from aws_lambda_powertools import Logger

from shared.adapters.alarms import AlarmManager, alarm_specs
from shared.adapters.inventory import InstanceNotFound
from shared.adapters.notify import Alert, Notifier
from shared.adapters.outbox import OutboxStore
from shared.domain.clock import utc
from shared.domain.idle import AlarmChange, Signal, WatchedMetric, classify, ordered_changes
from shared.domain.instance import Change, InstanceHead, refold
from shared.domain.lifecycle import Transition, fold
from shared.events.envelope import INSTANCE_ID_PATTERN
from shared.reports.formatting import cents, iso
from shared.services.alarm_identity import watches_what_we_put
from shared.services.alerts import AlertPoster
from shared.services.deps import LedgerDeps
from shared.services.instances import apply_to_instance
from shared.services.stopper import Stopper, StopRequest

logger = Logger(service="costtracker", child=True)
ALERT_KINDS = ("idle", "input_bound", "no_metrics")


@dataclass(frozen=True)
class AlarmOutcome:
    result: str  # applied | duplicate | ignored
    instance_id: str | None = None
    job_id: str | None = None
    condition: str | None = None
    alerts: tuple[str, ...] = ()
    auto_stop: str | None = None


# -- alarm lifecycle ----------------------------------------------------------------


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
    """Make the instance's alarms while it runs, remove them once it has stopped.

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
    specs = alarm_specs(deps.config.utilization, instance_id, head.profile.instance_type)
    if not specs:
        return "no_accelerator"
    transition = Transition(event_id=event_id, at=utc(at), state=state)
    folded = fold((*head.window, transition), head.notices, head.floor_open, head.floor_terminated)
    if folded.open is not None:
        alarms.ensure(specs, deps.config.utilization)
        return "created"
    alarms.delete([s.name for s in specs])
    return "deleted"


def sweep_alarms(
    deps: LedgerDeps, alarms: AlarmManager, open_heads: Sequence[InstanceHead] | None = None
) -> list[str]:
    """Delete our alarms whose instance is not running in the ledger (missed stop events).
    ``open_heads``: the open instances if the caller already read them (one Query, paged)."""
    prefix = deps.config.utilization.alarm_prefix
    heads = deps.instances.open_heads() if open_heads is None else open_heads
    running = {h.instance_id for h in heads}
    orphans = []
    for name in alarms.managed(prefix):
        parsed = alarm_of_name(name, prefix)
        if parsed is not None and parsed[0] not in running:
            orphans.append(name)
    if orphans:
        alarms.delete(orphans)
    return orphans


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


# -- alarm state changes -------------------------------------------------------------


def record_alarm_change(
    deps: LedgerDeps,
    notifier: Notifier,
    stopper: Stopper | None,
    *,
    event_id: str,
    alarm_name: str,
    watched: WatchedMetric | None,
    state: str,
    state_at: datetime,
    region: str,
    account: str,
) -> AlarmOutcome:
    """Keep a change of one of the tracker's own alarms on the instance's head; alert
    when the instance's condition changes. Anyone else's alarm is ignored: it never
    makes an instance idle and never stops anything. An alarm under the tracker's name
    that watches another metric, period or statistic than the tracker puts (or one for
    an instance the tracker makes no such alarm for) is someone else's."""
    parsed = alarm_of_name(alarm_name, deps.config.utilization.alarm_prefix)
    if parsed is None:
        logger.debug("not one of our alarms", extra={"event_id": event_id, "alarm": alarm_name})
        return AlarmOutcome("ignored")
    instance_id, signal = parsed
    if not watches_what_we_put(deps, account, instance_id, signal, watched):
        logger.warning(
            "alarm named like ours watches something else: ignored",
            extra={"event_id": event_id, "alarm": alarm_name, "watched": repr(watched)},
        )
        return AlarmOutcome("ignored", instance_id)
    change = AlarmChange(event_id=event_id, at=utc(state_at), signal=signal, state=state)

    def apply(head: InstanceHead) -> Change | None:
        return refold(
            head,
            head.window,
            head.notices,
            deps.prices.pin_for,
            deps.prices.series,
            alarms=(*head.alarms, change),
        )

    outcome = apply_to_instance(
        deps,
        account=account,
        instance_id=instance_id,
        region=region,
        event_id=event_id,
        event_at=change.at,
        change_head=apply,
        create_inferred=False,
    )
    updated = outcome.head
    if outcome.result == "duplicate" and outcome.job_id:
        # A retry: post what the first delivery may not have recorded (it may have
        # stopped between the head write and the outbox); the outbox drops the rest.
        seen = deps.instances.head(outcome.job_id, outcome.account or account, instance_id)
        if seen is not None:
            alert_on_change(deps, notifier, seen, change.at)
    if updated is None:
        return AlarmOutcome(outcome.result, instance_id, outcome.job_id)
    running_since = updated.open_segment.span.start if updated.open_segment else None
    condition, since = classify(updated.alarms, running_since)
    sent = alert_on_change(deps, notifier, updated, change.at)
    auto_stop = None
    if condition == "idle" and since is not None:
        auto_stop = consider_auto_stop(deps, stopper, updated, since)
    return AlarmOutcome("applied", instance_id, updated.job_id, condition, sent, auto_stop)


def last_complete_checkpoint_at(deps: LedgerDeps, job_id: str, now: datetime) -> datetime | None:
    """When the job's latest complete checkpoint completed: its step's completion marker
    was written (where a marker is configured), or nothing of its step has been written
    for the quiet period. A checkpoint still being written never counts."""
    from shared.adapters.checkpoint_store import CheckpointStore

    config = deps.config.checkpoint
    quiet = timedelta(minutes=config.quiet_minutes)
    complete: list[datetime] = []
    for item in CheckpointStore(deps.table).step_markers(job_id):
        if config.completion_marker:
            at = item.get("complete_at")
            if at:
                complete.append(datetime.fromisoformat(str(at)))
            continue
        last = item.get("last_write")
        if last and datetime.fromisoformat(str(last)) + quiet <= now:
            complete.append(datetime.fromisoformat(str(last)))
    return max(complete, default=None)


def alert_on_change(
    deps: LedgerDeps, notifier: Notifier, head: InstanceHead, from_at: datetime | None = None
) -> tuple[str, ...]:
    """Alert once per condition episode (idle, input-bound, no metrics) of the current
    run and once when it resolves to busy, walking the run's alarms by event time.

    With ``from_at`` (the time of the event being applied), only the episodes and
    resolutions that changes at or after it bring about are posted: what an event (or
    its retry) can have caused, a bounded number of outbox writes whatever the history.
    Earlier episodes were posted when they happened (the outbox keeps them until sent).
    """
    now = deps.clock.now()
    running_since = head.open_segment.span.start if head.open_segment else None
    runs = _condition_runs_with_cause(head.alarms, running_since)
    sent: list[str] = []
    poster = AlertPoster(OutboxStore(deps.table), notifier)
    for n, (condition, since, caused_at) in enumerate(runs):
        if condition not in ALERT_KINDS:
            continue
        new = from_at is None or caused_at >= from_at
        if new and poster.post(_condition_alert(deps, head, condition, since, now), now) != (
            "known"
        ):
            sent.append(condition)
        resolved = n + 1 < len(runs) and runs[n + 1][0] == "busy"
        resolved_now = resolved and (from_at is None or runs[n + 1][2] >= from_at)
        if resolved_now and poster.post(
            _resolved_alert(deps, head, condition, since, now), now
        ) != ("known"):
            sent.append(f"{condition}_resolved")
    return tuple(sent)


def _condition_runs_with_cause(
    changes: tuple[AlarmChange, ...], running_since: datetime | None
) -> list[tuple[str, datetime, datetime]]:
    """``condition_runs`` with, for each run, the time of the change that began it."""
    ordered = [c for c in ordered_changes(changes) if running_since and c.at >= running_since]
    runs: list[tuple[str, datetime, datetime]] = []
    for n in range(1, len(ordered) + 1):
        condition, since = classify(ordered[:n], running_since)
        if since is None:
            continue
        if not runs or runs[-1][0] != condition:
            runs.append((condition, since, ordered[n - 1].at))
    return runs


_ADVICE = {
    "idle": "Both the accelerator and the CPU are idle. If the job is done or hung, stop "
    "the instance (after a checkpoint); if it is waiting on something, fix that.",
    "input_bound": "The accelerator is starved while the CPU is busy: the input pipeline "
    "(data loading, preprocessing) or graph compilation is the bottleneck, not the "
    "instance count. Fix the pipeline; adding instances will not help.",
    "no_metrics": "No accelerator utilization is being published (INSUFFICIENT_DATA, not "
    "0 %): check neuron-monitor / the CloudWatch agent on the instance.",
}


def _attributes(deps: LedgerDeps, head: InstanceHead, severity: str) -> dict[str, str]:
    tags = head.profile.tags
    return {
        "severity": severity,
        "job_id": head.job_id,
        "instance_id": head.instance_id,
        # The subscription filter of each team reads this: the configured team tag.
        "team": tags.get(deps.config.access.team_tag_key, ""),
        "project": tags.get("project", ""),
        "cost-center": tags.get("cost-center", ""),
    }


def _condition_alert(
    deps: LedgerDeps, head: InstanceHead, kind: str, since: datetime, now: datetime
) -> Alert:
    from shared.domain import accrual as acc
    from shared.domain.instance import head_accrual

    cost = head_accrual(head).value(acc.INSTANCE, now, deps.prices.clock)
    rate = Decimal(0)
    segment = head.open_segment
    if segment is not None and segment.pin is not None and segment.pin.rate is not None:
        rate = segment.pin.rate.effective_usd
    label = {"idle": "Idle", "input_bound": "Input-bound", "no_metrics": "No metrics"}[kind]
    profile = head.profile
    subject = (
        f"{label}: {profile.instance_type} {profile.instance_id} of job {head.job_id} "
        f"since {since:%H:%M} UTC"
    )
    message = (
        f"{label} since {iso(since)}: instance {profile.instance_id} "
        f"({profile.instance_type}) of job {head.job_id}.\n"
        f"Burning {cents(rate)}/h; instance cost so far "
        f"{cents(cost)}.\n{_ADVICE[kind]}"
    )
    severity = "warning" if kind != "no_metrics" else "info"
    return Alert(
        "team",
        kind,
        subject,
        message,
        _attributes(deps, head, severity),
        alert_id=f"{kind}:{head.account}:{head.instance_id}:{iso(since)}",
        at=iso(now) or "",
    )


def _resolved_alert(
    deps: LedgerDeps, head: InstanceHead, kind: str, since: datetime, now: datetime
) -> Alert:
    subject = f"Resolved: {kind.replace('_', '-')} on {head.instance_id} of job {head.job_id}"
    attributes = _attributes(deps, head, "info") | {"resolves": kind}
    return Alert(
        "team",
        "resolved",
        subject,
        f"{subject}: the accelerator is busy again ({iso(now)}).",
        attributes,
        alert_id=f"resolved:{head.account}:{head.instance_id}:{kind}:{iso(since)}",
        at=iso(now) or "",
    )


# -- checkpoint-safe auto-stop --------------------------------------------------------


def consider_auto_stop(
    deps: LedgerDeps, stopper: Stopper | None, head: InstanceHead, idle_since: datetime
) -> str:
    """Stop an idle instance only if it opted in (tag value exactly ``true``, as IAM's
    condition compares it), and only once a complete checkpoint newer than the idle start
    exists (or the job declares it writes none). Dry-run stops nothing. The stopper reads
    the instance's tags again just before it stops it (``shared.services.stopper``)."""
    config = deps.config.auto_stop
    tags = head.profile.tags
    if not config.enabled or tags.get(config.tag_key, "") != "true":
        return "not_allowed"
    no_checkpoints = tags.get(config.no_checkpoints_tag_key, "") == "true"
    last = last_complete_checkpoint_at(deps, head.job_id, deps.clock.now())
    fresh = last is not None and last > idle_since
    if not (no_checkpoints or fresh):
        return "waiting_for_checkpoint"
    if config.dry_run or stopper is None:
        logger.info("auto-stop (dry run): would stop", extra={"instance_id": head.instance_id})
        return "would_stop"
    request = StopRequest(head.instance_id, head.profile.region, head.account)
    return stopper.stop(request).result


def sweep_auto_stop(
    deps: LedgerDeps,
    stopper: Stopper | None,
    open_heads: Sequence[InstanceHead] | None = None,
) -> dict[str, str]:
    """Hourly: re-consider idle, opted-in instances still waiting for a checkpoint, each
    on its own (one that fails is logged with its id and reported ``failed``)."""
    decisions = {}
    for head in deps.instances.open_heads() if open_heads is None else open_heads:
        running_since = head.open_segment.span.start if head.open_segment else None
        condition, since = classify(head.alarms, running_since)
        if condition == "idle" and since is not None:
            try:
                decisions[head.instance_id] = consider_auto_stop(deps, stopper, head, since)
            except Exception:
                logger.exception("auto-stop failed", extra={"instance_id": head.instance_id})
                decisions[head.instance_id] = "failed"
    return decisions
