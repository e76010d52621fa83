"""In-memory twins of the AWS-facing interfaces, for unit tests (no network)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import date, datetime
from typing import Any

from shared.budgets import Budget
from shared.costing import accrues_ebs, fold_segments, instance_cost, object_spans
from shared.ledger import JobItems, VersionConflict
from shared.models import CheckpointObject, InstanceProfile, InstanceRecord, Rate
from shared.notify import Alert


class InMemoryLedger:
    """``Ledger`` twin: same contract (versioning, idempotent marks), dicts for storage."""

    def __init__(self) -> None:
        self.instances: dict[str, InstanceRecord | str] = {}
        self.job_days: dict[tuple[str, str], dict[str, str]] = {}
        self.prices: dict[str, Rate] = {}
        self.claims: set[str] = set()
        self.checkpoints: dict[tuple[str, str], CheckpointObject] = {}
        self.unmatched: dict[tuple[str, str], str] = {}
        self.budgets: dict[str, Budget | None] = {}
        self.budget_changes: dict[str, list[dict[str, Any]]] = {}
        self.summaries: dict[date, dict[str, Any]] = {}
        self.reconciliations: dict[date, dict[str, Any]] = {}
        self.writes = 0

    def get_instance(self, instance_id: str) -> InstanceRecord | str | None:
        return self.instances.get(instance_id)

    def save_instance(self, record: InstanceRecord, expected_version: int | None) -> None:
        self.writes += 1
        current = self.instances.get(record.instance_id)
        if expected_version is None:
            if isinstance(current, InstanceRecord):
                raise VersionConflict(record.instance_id)
        elif not isinstance(current, InstanceRecord) or current.version != expected_version:
            raise VersionConflict(record.instance_id)
        self.instances[record.instance_id] = record.model_copy(
            update={"version": (expected_version or 0) + 1}
        )

    def mark_untracked(self, instance_id: str, instance_type: str, now: datetime) -> None:
        self.writes += 1
        self.instances[instance_id] = "untracked"

    def touch_job_days(self, job_id: str, days: Iterable[date], tags: dict[str, str]) -> None:
        for day in days:
            self.writes += 1
            self.job_days.setdefault((job_id, day.isoformat()), dict(tags))

    def _records(self) -> list[InstanceRecord]:
        return [r for r in self.instances.values() if isinstance(r, InstanceRecord)]

    def job_items(self, job_id: str) -> JobItems | None:
        records = tuple(r for r in self._records() if r.job_id == job_id)
        days = tuple(sorted(d for j, d in self.job_days if j == job_id))
        checkpoints = tuple(c for c in self.checkpoints.values() if c.job_id == job_id)
        if not records and not days and not checkpoints:
            return None
        return JobItems(job_id=job_id, instances=records, active_days=days, checkpoints=checkpoints)

    def get_checkpoint(self, bucket: str, key: str) -> CheckpointObject | None:
        return self.checkpoints.get((bucket, key))

    def save_checkpoint(self, obj: CheckpointObject, expected_version: int | None) -> None:
        self.writes += 1
        current = self.checkpoints.get((obj.bucket, obj.key))
        if (current.version if current else None) != expected_version:
            raise VersionConflict(obj.key)
        self.checkpoints[(obj.bucket, obj.key)] = obj.model_copy(
            update={"version": (expected_version or 0) + 1}
        )

    def record_unmatched(self, bucket: str, key: str, event_id: str, at: datetime) -> None:
        self.writes += 1
        self.unmatched[(bucket, key)] = event_id

    def unmatched_objects(self) -> list[tuple[str, str]]:
        return sorted(self.unmatched)

    def jobs_active_on(self, day: date) -> list[str]:
        return sorted(j for j, d in self.job_days if d == day.isoformat())

    def jobs_by_tag(self, key: str, value: str, first: date, last: date) -> list[str]:
        return sorted(
            {
                j
                for (j, d), tags in self.job_days.items()
                if tags.get(key) == value and first.isoformat() <= d <= last.isoformat()
            }
        )

    def open_instances(self) -> Iterator[InstanceRecord]:
        for r in self._records():
            if any(s.end is None for s in fold_segments(r.instance_id, r.transitions)):
                yield r

    def accruing_jobs(self) -> dict[str, dict[str, str]]:
        jobs: dict[str, dict[str, str]] = {}
        for r in self._records():
            running = any(s.end is None for s in fold_segments(r.instance_id, r.transitions))
            if accrues_ebs(r) and not running:
                jobs.setdefault(r.job_id, {}).update(r.profile.tags)
        for c in self.checkpoints.values():
            if any(s.end is None for s in object_spans(c)):
                jobs.setdefault(c.job_id, {})
        return jobs

    def unpriced_instances(self) -> Iterator[InstanceRecord]:
        for r in self._records():
            latest = max((t.at for t in r.transitions), default=None)
            if latest is not None and instance_cost(r, latest).unpriced:
                yield r

    def unpriced_checkpoints(self) -> Iterator[CheckpointObject]:
        for c in self.checkpoints.values():
            if c.rate is None and c.writes:
                yield c

    def stored_budgets(self) -> dict[str, Budget | None]:
        return dict(self.budgets)

    def put_budget(self, budget: Budget) -> None:
        self.budgets[budget.budget_id] = budget

    def delete_budget(self, budget_id: str) -> None:
        self.budgets[budget_id] = None

    def put_budget_change(
        self, budget_id: str, after: Budget | None, change: dict[str, Any]
    ) -> None:
        self.budgets[budget_id] = after
        self.budget_changes.setdefault(budget_id, []).append(dict(change))

    def budget_history(self, budget_id: str) -> list[dict[str, Any]]:
        return [dict(c) for c in self.budget_changes.get(budget_id, [])]

    def put_summary(self, day: date, summary: dict[str, Any]) -> None:
        self.summaries[day] = summary

    def get_summaries(self, days: Sequence[date]) -> dict[date, dict[str, Any]]:
        return {d: self.summaries[d] for d in days if d in self.summaries}

    def put_reconciliation(self, day: date, result: dict[str, Any]) -> None:
        self.reconciliations[day] = result

    def get_reconciliations(self, days: Sequence[date]) -> dict[date, dict[str, Any]]:
        return {d: self.reconciliations[d] for d in days if d in self.reconciliations}

    def get_price(self, key: str) -> Rate | None:
        return self.prices.get(key)

    def put_price(self, key: str, rate: Rate) -> None:
        self.prices[key] = rate

    def claim_once(self, key: str, expires_at: datetime) -> bool:
        if key in self.claims:
            return False
        self.claims.add(key)
        return True


class FakeInventory:
    def __init__(self, *profiles: InstanceProfile) -> None:
        self.profiles = {p.instance_id: p for p in profiles}
        self.calls = 0

    def describe(self, instance_id: str, region: str) -> InstanceProfile:
        from shared.inventory import InstanceNotFound

        self.calls += 1
        if instance_id not in self.profiles:
            raise InstanceNotFound(instance_id)
        return self.profiles[instance_id]


class RecordingNotifier:
    def __init__(self) -> None:
        self.sent: list[Alert] = []

    def send(self, alert: Alert) -> None:
        self.sent.append(alert)
