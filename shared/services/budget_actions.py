"""Budget actions: what a budget does once a threshold is crossed, beyond its alert.

Each action is recorded before it acts (a conditional write: once per budget, period
and threshold, whatever the concurrency), announced as ``action`` alerts to the team and
to finance, then carried out one target at a time: stops go through the one stopper
(opted-in instances and training jobs only, re-read just before), a deny through the
tracker's own IAM policy. A dry run (the default, and always when actions are not
enabled) records and announces exactly what it would have done and touches nothing. A
released action does nothing more for the rest of its period.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from shared.adapters.action_store import ActionRecord, ActionTarget
from shared.adapters.notify import Alert, Audience
from shared.config.budgets import Budget
from shared.config.ledger import CheckpointConfig
from shared.domain.budget_actions import (
    STOPS,
    BudgetAction,
    action_id,
    job_of_checkpoint_prefix,
    stop_due,
)
from shared.reports.formatting import iso
from shared.services.action_deps import ActionDeps
from shared.services.alerts import AlertPoster
from shared.services.deps import LedgerDeps
from shared.services.launch_denials import crossed, deny, deny_parts, lift_denials
from shared.services.stopper import StopRequest
from shared.services.utilization import last_complete_checkpoint_at

if TYPE_CHECKING:
    from shared.services.budgets import BudgetStatus

logger = logging.getLogger("costtracker.budget_actions")
ACTED = frozenset({"stopped", "not_running", "opted_out", "stop_failed"})


def run_actions(
    deps: LedgerDeps, status: BudgetStatus, now: datetime, poster: AlertPoster, acts: ActionDeps
) -> list[str]:
    """Fire the budget's crossed actions (once each), move the waiting ones on, and lift
    denials whose period ended or whose threshold is no longer crossed (the budget was
    raised). Returns the ids of the actions that changed."""
    budget = status.budget
    changed = []
    for action in budget.actions:
        aid = action_id(budget.budget_id, status.period_key, action)
        record = acts.store.get(aid)
        if record is None and crossed(status, action.at):
            record = _fire(deps, status, action, aid, now, poster, acts)
            changed.append(aid)
        pending = record is not None and _pending(record)
        if pending and _progress(deps, status, action, record, now, poster, acts):  # type: ignore[arg-type]
            changed.append(aid)
    changed += lift_denials(status, now, acts)
    return changed


def waiting_actions(status: BudgetStatus, acts: ActionDeps) -> bool:
    """Whether an action of this budget's current period still has to act."""
    budget = status.budget
    for action in budget.actions:
        record = acts.store.get(action_id(budget.budget_id, status.period_key, action))
        if record is not None and _pending(record):
            return True
    return False


def _pending(record: ActionRecord) -> bool:
    return (
        not record.dry_run
        and record.acted_at is None
        and record.state in ("announced", "waiting_for_checkpoint")
    )


def _fire(
    deps: LedgerDeps,
    status: BudgetStatus,
    action: BudgetAction,
    aid: str,
    now: datetime,
    poster: AlertPoster,
    acts: ActionDeps,
) -> ActionRecord:
    """Record the action (and what it acts on) first, then announce it."""
    dry = action.dry_run or (acts.stopper is None and action.do in STOPS)
    dry = dry or (action.do == "deny_launch" and acts.denial is None)
    targets = list(stop_targets(deps, status, acts)) if action.do in STOPS else []
    if action.do == "deny_launch":
        targets = deny_parts(deps, status, acts)
    would = "would_deny" if action.do == "deny_launch" else "would_stop"
    for target in targets:
        acts.store.put_target(aid, replace(target, result=would if dry else ""))
    state = "waiting_for_checkpoint" if action.do == "stop_after_checkpoint" else "announced"
    record = ActionRecord(
        action_id=aid,
        budget_id=status.budget.budget_id,
        period_key=status.period_key,
        kind=action.do,
        at_percent=action.at,
        dry_run=dry,
        state="announced" if dry else state,
        fired_at=now,
        acted_at=now if action.do == "notify" and not dry else None,
        detail=_plan(action, targets, dry),
    )
    if not acts.store.create(record):  # another run recorded it first
        known = acts.store.get(aid)
        assert known is not None
        return known
    if record.state == "waiting_for_checkpoint":  # the jobs' checkpoints wake it
        for job_id in sorted({t.job_id for t in targets}):
            acts.store.mark_waiting(job_id, record, now + action.grace)
    announce(status.budget, record, "fired", now, poster)
    return record


def _plan(action: BudgetAction, targets: list[ActionTarget], dry: bool) -> str:
    """Exactly what the action does (or, dry, would have done)."""
    verb = "would " if dry else "will "
    names = ", ".join(t.target_id for t in targets[:20]) or "nothing (no opted-in target)"
    more = f" and {len(targets) - 20} more" if len(targets) > 20 else ""
    if action.do == "stop_now":
        return f"{verb}stop now: {names}{more}"
    if action.do == "stop_after_checkpoint":
        return (
            f"{verb}stop each job's instances after its next complete checkpoint, or "
            f"{int(action.grace.total_seconds() // 60)} min after the crossing at the "
            f"latest: {names}{more}"
        )
    if action.do == "deny_launch":
        where = ", ".join(t.target_id for t in targets[:20]) or "nowhere (no principal or account)"
        return f"{verb}deny launches carrying the scope's tags: {where}{more}"
    return "notify only"


def stop_targets(
    deps: LedgerDeps, status: BudgetStatus, acts: ActionDeps
) -> Iterator[ActionTarget]:
    """The scope's running instances and training jobs that carry the opt-in tag; the
    others are never stopped (the stopper re-reads the tag, and IAM conditions on it)."""
    config = deps.config
    tag_key = config.auto_stop.tag_key
    jobs = set(status.spend_by_job)
    for head in deps.instances.open_heads():
        if head.job_id in jobs and head.profile.tags.get(tag_key, "") == "true":
            region, account = head.profile.region, head.account
            yield ActionTarget("instance", head.instance_id, account, region, head.job_id)
    from shared.adapters.managed_store import TrainingStore

    trainings = TrainingStore(deps.table)
    for job_id in sorted(jobs):
        for training in trainings.heads_of(job_id):
            if training.status == "InProgress" and training.tags.get(tag_key, "") == "true":
                request = StopRequest(training.name, training.region, training.account)
                now = acts.stopper.training_job_now(request) if acts.stopper else None
                if now is None:  # not described (throttled, role refused): waits, bounded
                    tracked = "unknown"  # by the grace, rather than lose its work
                elif checkpoints_tracked(now.checkpoint_uri, config.checkpoint, job_id):
                    tracked = "true"
                else:
                    tracked = "false"
                yield ActionTarget(
                    "training_job",
                    training.name,
                    training.account,
                    training.region,
                    job_id,
                    extra={"tracked": tracked},
                )


def checkpoints_tracked(uri: str, checkpoint: CheckpointConfig, job_id: str) -> bool:
    """A SageMaker job's ``CheckpointConfig.S3Uri`` is under a tracked checkpoint bucket
    and its prefix names this job under the tracked key pattern, so the ledger sees its
    checkpoints as the job's; any other is stopped at the crossing."""
    if not uri.startswith("s3://"):
        return False
    bucket, _, prefix = uri[len("s3://") :].partition("/")
    if bucket not in checkpoint.buckets:
        return False
    return job_of_checkpoint_prefix(checkpoint.key_pattern, prefix) == job_id


def _progress(
    deps: LedgerDeps,
    status: BudgetStatus,
    action: BudgetAction,
    record: ActionRecord,
    now: datetime,
    poster: AlertPoster,
    acts: ActionDeps,
) -> bool:
    if action.do in STOPS:
        return _progress_stops(deps, status, action, record, now, poster, acts)
    if action.do == "deny_launch":
        saved = deny(deps.config, status, record, now, acts)
        if saved is not None:
            announce(status.budget, saved, "acted", now, poster)
        return saved is not None
    return False


def _progress_stops(
    deps: LedgerDeps,
    status: BudgetStatus,
    action: BudgetAction,
    record: ActionRecord,
    now: datetime,
    poster: AlertPoster,
    acts: ActionDeps,
) -> bool:
    """Stop each target that is due (its job checkpointed after the crossing, the grace
    ran out, or stop_now); each on its own, recorded as it goes."""
    assert acts.stopper is not None and record.fired_at is not None
    targets = acts.store.targets(record.action_id)
    waiting = [t for t in targets if not t.result]
    acted = False
    for target in waiting:
        if not _due(deps, action, record.fired_at, target, now):
            continue
        request = StopRequest(target.target_id, target.region, target.account)
        if target.kind == "training_job":
            outcome = acts.stopper.stop_training_job(request)
        else:
            outcome = acts.stopper.stop(request)
        acts.store.put_target(
            record.action_id, replace(target, result=outcome.result, acted_at=now)
        )
        acted = True
    if all(t.result for t in acts.store.targets(record.action_id)):
        failed = [t for t in acts.store.targets(record.action_id) if t.result == "stop_failed"]
        saved = acts.store.save(
            replace(
                record,
                state="failed" if failed else "done",
                acted_at=now,
                detail=record.detail
                + (f"; {len(failed)} stop(s) failed: see the action's targets" if failed else ""),
            )
        )
        if saved is not None:
            announce(status.budget, saved, "acted", now, poster)
        return True
    return acted


def _due(
    deps: LedgerDeps, action: BudgetAction, fired_at: datetime, target: ActionTarget, now: datetime
) -> bool:
    """A SageMaker job whose checkpoints are not tracked is stopped at the crossing
    (StopTrainingJob's 120 s SIGTERM window is its save); one that could not be described
    (``tracked`` unknown) waits like a tracked one, at most its grace."""
    if target.kind == "training_job" and target.extra.get("tracked") == "false":
        return True
    checkpoint = last_complete_checkpoint_at(deps, target.job_id, now)
    return stop_due(action, fired_at, checkpoint, now)


def announce(
    budget: Budget, record: ActionRecord, stage: str, now: datetime, poster: AlertPoster
) -> None:
    """Two alerts (team and finance) of kind ``action``, ids stable per stage."""
    dry = " (dry run)" if record.dry_run else ""
    subject = f"Budget {budget.budget_id} action {record.kind} at {record.at_percent} %{dry}: "
    subject += {"fired": "fired", "released": "released"}.get(stage, record.state)
    body = "\n".join(
        [
            subject,
            f"Action id: {record.action_id} (release: POST /budgets/{budget.budget_id}/"
            f"actions/{record.action_id}/release, finance and admins).",
            f"Scope: {budget.scope.describe()}; period {record.period_key}.",
            record.detail,
        ]
    )
    team = (budget.scope.tag or {}).get("team", "")
    audiences: tuple[Audience, ...] = ("team", "finance")
    for audience in audiences:
        attributes = {
            "budget_id": budget.budget_id,
            "action_id": record.action_id,
            "action": record.kind,
            "state": record.state,
            "dry_run": "true" if record.dry_run else "false",
            "threshold": str(record.at_percent),
            **({"team": team} if team else {}),
        }
        alert = Alert(
            audience,
            "action",
            subject,
            body,
            attributes,
            alert_id=f"action:{record.action_id}:{stage}:{audience}",
            at=iso(now) or "",
        )
        poster.record(alert, now)
