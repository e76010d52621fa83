"""Accelerator utilization: alarm lifecycle, alarm-state classification, team alerts,
and checkpoint-safe auto-stop.

An alarm is read by its configuration (metric namespace and name, and the instance
dimension), not its name, so a renamed alarm or someone else's alarm on the same
metric counts; alarms on other metrics, and instances we do not track, are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Protocol

from aws_lambda_powertools import Logger

from shared.alarms import AlarmManager, alarm_specs, instance_of_alarm
from shared.clock import utc
from shared.costing import classify, condition_runs, fold_segments, instance_cost
from shared.inventory import InstanceNotFound
from shared.models import AlarmTransition, InstanceRecord, Transition
from shared.notify import Alert, Notifier
from shared.services.instance_state import LedgerDeps, update_instance
from shared.views import cents, iso

logger = Logger(service="costtracker", child=True)
ALERT_KINDS = ("idle", "input_bound", "no_metrics")


class InstanceStopper(Protocol):
    def stop(self, instance_id: str) -> None: ...


class Ec2Stopper:
    def __init__(self, ec2_client: object) -> None:
        self._ec2 = ec2_client

    def stop(self, instance_id: str) -> None:
        self._ec2.stop_instances(InstanceIds=[instance_id])  # type: ignore[attr-defined]


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
) -> str:
    """Make the instance's alarms while it runs, remove them once it has stopped.

    Decided on the instance's whole known history plus this event, so a late
    ``running`` after ``terminated`` does not resurrect alarms.
    """
    current = deps.ledger.get_instance(instance_id)
    if current == "untracked":
        return "untracked"
    if isinstance(current, InstanceRecord):
        record = current
    else:
        profile = deps.inventory.describe(instance_id, region)
        if deps.config.tracking.job_of(instance_id, profile.instance_type, profile.tags) is None:
            return "untracked"
        record = InstanceRecord(profile=profile, job_id="")
    specs = alarm_specs(deps.config.utilization, instance_id, record.profile.instance_type)
    if not specs:
        return "no_accelerator"
    transitions = (*record.transitions, Transition(event_id=event_id, at=utc(at), state=state))
    running = any(s.end is None for s in fold_segments(instance_id, transitions))
    if running:
        alarms.ensure(specs, deps.config.utilization)
        return "created"
    alarms.delete([s.name for s in specs])
    return "deleted"


def sweep_alarms(deps: LedgerDeps, alarms: AlarmManager) -> list[str]:
    """Delete our alarms whose instance is not running in the ledger (missed stop events)."""
    prefix = deps.config.utilization.alarm_prefix
    running = {r.instance_id for r in deps.ledger.open_instances()}  # one Query, paged
    orphans = []
    for name in alarms.managed(prefix):
        instance_id = instance_of_alarm(name, prefix)
        if instance_id is not None and instance_id not in running:
            orphans.append(name)
    if orphans:
        alarms.delete(orphans)
    return orphans


# -- alarm state changes -------------------------------------------------------------


def record_alarm_change(
    deps: LedgerDeps,
    notifier: Notifier,
    stopper: InstanceStopper | None,
    *,
    event_id: str,
    namespace: str,
    metric: str,
    dimensions: dict[str, str],
    state: str,
    state_at: datetime,
    region: str,
) -> AlarmOutcome:
    """Keep the alarm transition on the instance record; alert when its condition changes."""
    utilization = deps.config.utilization
    signal = utilization.signal_of(namespace, metric)
    instance_id = dimensions.get(utilization.dimension_for(namespace, metric))
    if signal is None or not instance_id:
        logger.debug(
            "alarm on a metric we do not read", extra={"event_id": event_id, "metric": metric}
        )
        return AlarmOutcome("ignored")
    transition = AlarmTransition(
        event_id=event_id,
        at=utc(state_at),
        signal=signal,
        state=state,
    )

    def change(record: InstanceRecord, now: datetime) -> tuple[InstanceRecord, set[date]]:
        transitions = (*record.alarm_transitions, transition)
        return record.model_copy(update={"alarm_transitions": transitions}), set()

    try:
        outcome, updated = update_instance(deps, instance_id, region, event_id, change)
    except InstanceNotFound:
        logger.debug(
            "alarm for an instance EC2 does not know",
            extra={"event_id": event_id, "instance_id": instance_id},
        )
        return AlarmOutcome("ignored", instance_id)
    if updated is None:
        if outcome.result == "untracked":
            logger.debug(
                "alarm for an instance we do not track",
                extra={"event_id": event_id, "instance_id": instance_id},
            )
            return AlarmOutcome("ignored", instance_id)
        return AlarmOutcome(outcome.result, instance_id, outcome.job_id)
    condition, since = classify(updated)
    sent = _alert_on_change(deps, notifier, updated)
    auto_stop = None
    if condition == "idle" and since is not None:
        auto_stop = consider_auto_stop(deps, stopper, updated, since)
    return AlarmOutcome("applied", instance_id, updated.job_id, condition, sent, auto_stop)


def _checkpoint_writes(deps: LedgerDeps, job_id: str) -> list[datetime]:
    items = deps.ledger.job_items(job_id)
    if items is None:
        return []
    return sorted(w.at for obj in items.checkpoints for w in obj.writes)


def _alert_on_change(
    deps: LedgerDeps, notifier: Notifier, record: InstanceRecord
) -> tuple[str, ...]:
    """Alert once per condition episode (idle, input-bound, no metrics) and once when it
    resolves to busy, walking the history by event time: a late event still yields the
    same episodes, and duplicates are claimed away."""
    now = deps.clock.now()
    runs = condition_runs(record)
    sent: list[str] = []
    window = timedelta(minutes=deps.config.utilization.window_minutes)
    checkpoints: list[datetime] | None = None
    for n, (condition, since) in enumerate(runs):
        if condition not in ALERT_KINDS:
            continue
        if condition == "idle":
            if checkpoints is None:
                checkpoints = _checkpoint_writes(deps, record.job_id)
            if any(since - window <= at <= since for at in checkpoints):
                logger.info(
                    "low utilization during checkpoint progress: not idle",
                    extra={"instance_id": record.instance_id},
                )
                continue
        expires = now + timedelta(days=30)
        if deps.ledger.claim_once(
            f"alert#{record.instance_id}#{condition}#{since.isoformat()}", expires
        ):
            notifier.send(_condition_alert(record, condition, since, now))
            sent.append(condition)
        resolved = n + 1 < len(runs) and runs[n + 1][0] == "busy"
        if resolved and deps.ledger.claim_once(
            f"resolved#{record.instance_id}#{condition}#{since.isoformat()}", expires
        ):
            notifier.send(_resolved_alert(record, condition, now))
            sent.append(f"{condition}_resolved")
    return tuple(sent)


_ADVICE = {
    "idle": "Both the accelerator and the CPU are idle. If the job is done or hung, stop "
    "the instance (after a checkpoint); if it is waiting on something, fix that.",
    "input_bound": "The accelerator is starved while the CPU is busy: the input pipeline "
    "(data loading, preprocessing) or graph compilation is the bottleneck, not the "
    "instance count. Fix the pipeline; adding instances will not help.",
    "no_metrics": "No accelerator utilization is being published (INSUFFICIENT_DATA, not "
    "0 %): check neuron-monitor / the CloudWatch agent on the instance.",
}


def _attributes(record: InstanceRecord, kind: str, now: datetime, severity: str) -> dict[str, str]:
    tags = record.profile.tags
    return {
        "kind": kind,
        "severity": severity,
        "job_id": record.job_id,
        "instance_id": record.instance_id,
        "team": tags.get("team", ""),
        "project": tags.get("project", ""),
        "cost-center": tags.get("cost-center", ""),
        "at": iso(now) or "",
    }


def _condition_alert(record: InstanceRecord, kind: str, since: datetime, now: datetime) -> Alert:
    cost = instance_cost(record, now)
    label = {"idle": "Idle", "input_bound": "Input-bound", "no_metrics": "No metrics"}[kind]
    profile = record.profile
    subject = (
        f"{label}: {profile.instance_type} {profile.instance_id} of job {record.job_id} "
        f"since {since:%H:%M} UTC"
    )
    message = (
        f"{label} since {iso(since)}: instance {profile.instance_id} "
        f"({profile.instance_type}) of job {record.job_id}.\n"
        f"Burning {cents(cost.hourly_rate_usd)}/h; instance cost so far "
        f"{cents(cost.instance_usd)}.\n{_ADVICE[kind]}"
    )
    severity = "warning" if kind != "no_metrics" else "info"
    return Alert("team", kind, subject, message, _attributes(record, kind, now, severity))


def _resolved_alert(record: InstanceRecord, kind: str, now: datetime) -> Alert:
    subject = f"Resolved: {kind.replace('_', '-')} on {record.instance_id} of job {record.job_id}"
    attributes = _attributes(record, "resolved", now, "info") | {"resolves": kind}
    return Alert(
        "team",
        "resolved",
        subject,
        f"{subject}: the accelerator is busy again ({iso(now)}).",
        attributes,
    )


# -- checkpoint-safe auto-stop --------------------------------------------------------


def consider_auto_stop(
    deps: LedgerDeps, stopper: InstanceStopper | None, record: InstanceRecord, idle_since: datetime
) -> str:
    """Stop an idle instance only if it opted in, and only once a checkpoint newer than
    the idle start exists (or the job declares it writes none). Dry-run stops nothing."""
    config = deps.config.auto_stop
    tags = record.profile.tags
    if not config.enabled or tags.get(config.tag_key, "").lower() != "true":
        return "not_allowed"
    no_checkpoints = tags.get(config.no_checkpoints_tag_key, "").lower() == "true"
    fresh = any(at > idle_since for at in _checkpoint_writes(deps, record.job_id))
    if not (no_checkpoints or fresh):
        return "waiting_for_checkpoint"
    if config.dry_run or stopper is None:
        logger.info("auto-stop (dry run): would stop", extra={"instance_id": record.instance_id})
        return "would_stop"
    stopper.stop(record.instance_id)
    logger.info("auto-stop: stopped idle instance", extra={"instance_id": record.instance_id})
    return "stopped"


def sweep_auto_stop(deps: LedgerDeps, stopper: InstanceStopper | None) -> dict[str, str]:
    """Hourly: re-consider idle, opted-in instances still waiting for a checkpoint."""
    decisions = {}
    for record in deps.ledger.open_instances():
        condition, since = classify(record)
        if condition == "idle" and since is not None:
            decisions[record.instance_id] = consider_auto_stop(deps, stopper, record, since)
    return decisions
