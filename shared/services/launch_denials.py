"""deny_launch in the scope's accounts (docs/cost-rules.md "Budgets: forecasts and
actions"), one part per place it is attached, each its own small record (an action
target): with IAM, each configured principal in the scope's accounts (the policy is made
in the principal's own account); with an SCP, each of the scope's member accounts. One
part that fails never stops the others: it is retried at the next ticks (``MAX_TRIES``
in all) and then marked ``failed``, saying why; a part AWS refuses for good (a principal
at its policy quota, the management account for an SCP) is final at once.

The scope's accounts: those ``ledger.accounts.team_accounts`` maps the scope's team to;
without a mapping, an IAM deny goes to every configured principal, and an SCP to the
accounts the scope's instances and training jobs run in at the crossing.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from shared.adapters.action_store import ActionRecord, ActionStore, ActionTarget
from shared.adapters.launch_denial import DenialRefused, account_of
from shared.adapters.managed_store import TrainingStore
from shared.config.budgets import Budget
from shared.config.ledger import LedgerConfig
from shared.services.action_deps import ActionDeps
from shared.services.deps import LedgerDeps

if TYPE_CHECKING:
    from shared.services.budgets import BudgetStatus

logger = logging.getLogger("costtracker.budget_actions")
DENY_PARTS = frozenset({"deny_principal", "deny_account"})
MAX_TRIES = 3  # a part failing this many ticks in a row is marked failed


def crossed(status: BudgetStatus, percent: int) -> bool:
    return status.spend * 100 >= status.budget.amount_usd * percent


def deny_tags(budget: Budget, config: LedgerConfig) -> dict[str, str]:
    if budget.scope.tag:
        return dict(budget.scope.tag)
    if budget.scope.job is not None:
        return {config.tracking.job_tag_keys[0]: budget.scope.job}
    raise ValueError("deny_launch needs a tag or job scope")


def scope_accounts(budget: Budget, config: LedgerConfig) -> tuple[str, ...] | None:
    """The accounts the scope's team is limited to, or None (not limited)."""
    team = (budget.scope.tag or {}).get(config.access.team_tag_key)
    mapped = config.accounts.team_accounts.get(team) if team else None
    return tuple(mapped) if mapped else None


def deny_parts(deps: LedgerDeps, status: BudgetStatus, acts: ActionDeps) -> list[ActionTarget]:
    """Where the deny goes (bounded: the configured principals, or the scope's accounts)."""
    config = deps.config
    accounts = scope_accounts(status.budget, config)
    if config.budget_actions.deny_with == "scp":
        chosen = accounts if accounts is not None else running_accounts(deps, status, acts)
        return [ActionTarget("deny_account", a, a, "", "") for a in sorted(set(chosen))]
    return [
        ActionTarget("deny_principal", arn, account_of(arn), "", "")
        for arn in acts.deny_principals
        if accounts is None or account_of(arn) in accounts
    ]


def running_accounts(deps: LedgerDeps, status: BudgetStatus, acts: ActionDeps) -> list[str]:
    """The accounts the scope's instances and training jobs run in now."""
    jobs = set(status.spend_by_job)
    found = {
        h.account or acts.home_account() for h in deps.instances.open_heads() if h.job_id in jobs
    }
    trainings = TrainingStore(deps.table)
    for job_id in sorted(jobs):
        for training in trainings.heads_of(job_id):
            if training.status == "InProgress":
                found.add(training.account or acts.home_account())
    return sorted(a for a in found if a)


def parts_of(store: ActionStore, aid: str) -> list[ActionTarget]:
    return [t for t in store.targets(aid) if t.kind in DENY_PARTS]


def _recorded_parts(acts: ActionDeps, record: ActionRecord) -> list[ActionTarget]:
    """The record's parts; a deny attached before parts were recorded (one policy in the
    tracker's own account, on ``deny_principals`` there) reads as those principals."""
    parts = parts_of(acts.store, record.action_id)
    if parts or not record.policy_arn or record.state != "done":
        return parts
    where = account_of(record.policy_arn)
    return [
        ActionTarget("deny_principal", arn, where, "", "", "attached", record.acted_at,
                     {"policy": record.policy_arn})
        for arn in acts.deny_principals
        if account_of(arn) == where
    ]  # fmt: skip


def deny(
    config: LedgerConfig,
    status: BudgetStatus,
    record: ActionRecord,
    now: datetime,
    acts: ActionDeps,
) -> ActionRecord | None:
    """Attach each part not attached yet; once every part has its result, the record's
    state (``done``, or ``failed`` naming the parts that failed). Returns the record
    when it reached its state (to announce), else None."""
    assert acts.denial is not None
    tags = deny_tags(status.budget, config)
    acts.store.mark_attached(status.budget.budget_id, record.action_id)
    policies: dict[str, str] = {}
    for part in parts_of(acts.store, record.action_id):
        if not part.result:
            acts.store.put_target(
                record.action_id, _attach(part, record, tags, policies, now, acts)
            )
    parts = parts_of(acts.store, record.action_id)
    if any(not p.result for p in parts):
        return None  # a part is retried at the next tick
    attached = [p for p in parts if p.result == "attached"]
    failed = [p for p in parts if p.result == "failed"]  # "refused": the management account
    if not parts:
        detail = "nothing to attach: no principal or account in the scope's accounts"
    else:
        detail = f"attached to {len(attached)} of {len(parts)}: " + ", ".join(
            p.target_id for p in attached[:20]
        )
    not_attached = [p for p in parts if p.result != "attached"]
    if not_attached:
        detail += "; not attached: " + "; ".join(
            f"{p.target_id} ({p.result}: {p.extra.get('error', '')})" for p in not_attached[:5]
        )
    state = "done" if attached and not failed else "failed"
    policy = attached[0].extra.get("policy", "") if attached else ""
    return acts.store.save(
        replace(record, state=state, acted_at=now, policy_arn=policy, detail=detail[:1000])
    )


def _attach(
    part: ActionTarget,
    record: ActionRecord,
    tags: dict[str, str],
    policies: dict[str, str],
    now: datetime,
    acts: ActionDeps,
) -> ActionTarget:
    """One part: the policy (one per account with IAM, one in all for an SCP), attached."""
    assert acts.denial is not None
    where = part.account if acts.denial.via == "iam" else ""
    try:
        if where not in policies:
            policies[where] = acts.denial.ensure_policy(record.action_id, tags, part.account)
        acts.denial.attach(policies[where], part.target_id)
    except DenialRefused as exc:
        made = {"policy": policies[where]} if where in policies else {}
        extra = {"error": str(exc)[:300], **made}
        return replace(part, result=exc.result, acted_at=now, extra=extra)
    except Exception as exc:  # one part's failure never stops the others
        logger.exception("deny_launch part failed", extra={"target": part.target_id})
        tries = int(part.extra.get("tries", "0")) + 1
        made = {"policy": policies[where]} if where in policies else {}
        extra = {"tries": str(tries), "error": f"{type(exc).__name__}: {exc}"[:300], **made}
        return replace(part, result="failed" if tries >= MAX_TRIES else "", extra=extra)
    return replace(part, result="attached", acted_at=now, extra={"policy": policies[where]})


def detach_parts(
    acts: ActionDeps, record: ActionRecord, now: datetime, *, home_only: bool = False
) -> bool:
    """Detach every attached part (``home_only``: only the principals in the tracker's own
    account, what the API may do); True when none is left attached."""
    assert acts.denial is not None
    left, aid = False, record.action_id
    for part in _recorded_parts(acts, record):
        if part.result != "attached":
            continue
        if home_only and (part.kind != "deny_principal" or part.account != acts.home_account()):
            left = True
            continue
        try:
            acts.denial.detach(part.extra.get("policy", ""), part.target_id)
        except Exception:  # the next tick tries again
            logger.exception("deny_launch detach failed", extra={"target": part.target_id})
            left = True
            continue
        acts.store.put_target(aid, replace(part, result="detached", acted_at=now))
    return not left


def _delete_policies(acts: ActionDeps, aid: str) -> bool:
    assert acts.denial is not None
    done = True
    for policy in sorted({p.extra.get("policy", "") for p in parts_of(acts.store, aid)} - {""}):
        try:
            acts.denial.delete_policy(policy)
        except Exception:  # the next tick tries again
            logger.exception("deny_launch policy not deleted", extra={"policy": policy})
            done = False
    return done


def lift_denials(status: BudgetStatus, now: datetime, acts: ActionDeps) -> list[str]:
    """A denial ends with its period, when the budget is raised above its threshold, or
    on release (the API detached what it could; the rest is detached here); its policies
    are then deleted. Reads only the budget's attached denials."""
    lifted: list[str] = []
    if acts.denial is None or not any(a.do == "deny_launch" for a in status.budget.actions):
        return lifted
    budget_id = status.budget.budget_id
    for aid in acts.store.attached(budget_id):
        record = acts.store.get(aid)
        if record is None:
            acts.store.mark_lifted(budget_id, aid, now)
            continue
        ended = record.period_key != status.period_key
        live = [p for p in _recorded_parts(acts, record) if p.result == "attached"]
        if not live:
            final = record.state in ("done", "failed", "released")
            if (final or ended) and _delete_policies(acts, aid):
                acts.store.mark_lifted(budget_id, aid, now)
            continue
        if record.state != "released" and not ended and crossed(status, record.at_percent):
            continue
        why = "period ended" if ended else "budget raised"
        if _lift(acts, record, budget_id, aid, now, why):
            lifted.append(aid)
    return lifted


def _lift(
    acts: ActionDeps, record: ActionRecord, budget_id: str, aid: str, now: datetime, why: str
) -> bool:
    """Detach every part, release the record (``why``) unless it is, then delete its
    policies and mark the denial lifted; whether this call released it. A detach or a
    save that fails leaves it for the next pass."""
    if not detach_parts(acts, record, now):
        return False
    released = record.state != "released"
    if released:
        saved = acts.store.save(replace(record, state="released", released_by=why, released_at=now))
        if saved is None:
            return False
    if _delete_policies(acts, aid):
        acts.store.mark_lifted(budget_id, aid, now)
    return released


def lift_orphaned_denials(deny_budgets: set[str], now: datetime, acts: ActionDeps) -> list[str]:
    """Denials whose budget is gone, or no longer has a deny_launch rule, are lifted too
    (``lift_denials`` only sees budgets that deny): detached, released and deleted.
    ``deny_budgets``: the ids of the budgets that still deny."""
    lifted: list[str] = []
    if acts.denial is None:
        return lifted
    for budget_part, aid in acts.store.attached_anywhere():
        record = acts.store.get(aid)
        budget_id = record.budget_id if record is not None else budget_part
        if budget_id in deny_budgets:
            continue
        if record is None:
            acts.store.mark_lifted(budget_id, aid, now)
            continue
        if _lift(acts, record, budget_id, aid, now, "budget removed"):
            lifted.append(aid)
    return lifted
