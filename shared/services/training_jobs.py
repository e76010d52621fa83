"""SageMaker Training Job State Change -> the job ledger: one transaction per event.

The event names the job, its status and resources; the job is the first job tag in its
``Tags``, else ``sagemaker:<name>``. The training head is folded by event time (a terminal
status is final), priced with SageMaker's own ``ml.*`` rate (override, cache, snapshot, else
unpriced), and, at a terminal status, billed from one DescribeTrainingJob call. The head and
the job's rollup change are written together; a duplicate or an event that changes nothing
writes nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from shared.adapters.managed_store import TrainingStore
from shared.adapters.rollup_store import RollupChange
from shared.adapters.sagemaker import TrainingJobNotFound, TrainingJobs
from shared.adapters.unit_of_work import UnitOfWork
from shared.domain.accrual import Accrual
from shared.domain.clock import day_start, utc
from shared.domain.managed.models import TrainingJobDescription
from shared.domain.managed.training import (
    TrainingHead,
    foreign_description,
    merge,
    training_accrual,
    with_billing,
)
from shared.domain.managed.training_cost import sagemaker_job_id
from shared.domain.tags import grouping_tags
from shared.services.deps import LedgerDeps
from shared.services.versioned import commit, versioned_update

logger = logging.getLogger("costtracker.training")


@dataclass(frozen=True)
class TrainingOutcome:
    result: str  # applied, duplicate, ignored
    training_job: str
    job_id: str
    detail: str = ""

    def answer(self) -> dict[str, str]:
        return {
            "result": self.result,
            "training_job": self.training_job,
            "job_id": self.job_id,
            "detail": self.detail,
        }


def _priced(deps: LedgerDeps, head: TrainingHead) -> TrainingHead:
    """Rates pinned at first sight; an unknown one is asked again at every event."""
    update: dict[str, object] = {}
    if head.rate is None:
        update["rate"] = deps.prices.sagemaker_rate(head.region, head.instance_type)
    if head.storage_rate is None and head.volume_gb > 0:
        update["storage_rate"] = deps.prices.sagemaker_storage_rate(head.region)
    return head.model_copy(update=update) if update else head


def _billed(jobs: TrainingJobs, head: TrainingHead) -> TrainingHead:
    if not head.terminal or head.billed:
        return head
    try:
        described = jobs.describe(
            head.name, event_tags=head.tags or None, account=head.account, region=head.region
        )
    except TrainingJobNotFound as exc:
        warning = f"DescribeTrainingJob: {exc}; cost accrued to its end (an estimate)"
        if warning in head.warnings:
            return head
        return head.model_copy(update={"warnings": (*head.warnings, warning)})
    refused = foreign_description(head, described)
    if refused:
        logger.warning(refused, extra={"training_job": head.name, "account": head.account})
    return with_billing(head, described)


def rollup_change(
    deps: LedgerDeps, old: TrainingHead | None, new: TrainingHead, event_at: datetime
) -> RollupChange:
    delta = training_accrual(new)
    if old is not None:
        delta = delta.minus(training_accrual(old))
    change = RollupChange(job_id=new.job_id, account=new.account, delta=delta)
    if new.training_start is not None:
        change.at_most["started_at"] = new.training_start.isoformat()
    change.at_least["last_event_at"] = event_at.isoformat()
    change.at_most["first_event_at"] = event_at.isoformat()
    tags = grouping_tags(new.tags, deps.config)
    first = new.training_start.isoformat() if new.training_start else "9999"
    change.tags = tags
    change.tags_from = f"{first}#{new.name}"  # ties by job name alone
    change.add_strings["tag_values"] = {f"{k}={v}" for k, v in tags.items()}
    change.add_strings["training_jobs"] = {new.name}
    sources = {r.provenance for r in (new.rate, new.storage_rate) if r is not None}
    if sources:
        change.add_strings["price_sources"] = sources
    if event_at < day_start(deps.clock.now()):
        change.counters["late_events"] = 1
    return change


def record_training_event(
    deps: LedgerDeps,
    store: TrainingStore,
    jobs: TrainingJobs,
    *,
    event_id: str,
    at: datetime,
    described: TrainingJobDescription,
) -> TrainingOutcome:
    """Fold one state change into the training head and the job's rollup."""
    at = utc(at)
    job_id = sagemaker_job_id(described.name, described.tags, deps.config.tracking.job_tag_keys)

    def attempt(_: int) -> TrainingOutcome:
        old = store.head(job_id, described.account, described.name)
        if old is not None and event_id in old.seen:
            return TrainingOutcome("duplicate", described.name, job_id)
        new = _billed(jobs, _priced(deps, merge(old, described, at, event_id, job_id)))
        if old is not None and new.same_as(old):
            return TrainingOutcome("duplicate", described.name, job_id, "nothing changed")
        uow = UnitOfWork(deps.table)
        store.stage(uow, new, old.version if old is not None else None)
        deps.rollups.stage(uow, rollup_change(deps, old, new, at))
        commit(uow)
        return TrainingOutcome("applied", described.name, job_id, new.status)

    return versioned_update(attempt, described.name)


def accrual_of(heads: list[TrainingHead]) -> Accrual:
    out = Accrual()
    for head in heads:
        out.add(training_accrual(head))
    return out
