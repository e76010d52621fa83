"""Budget actions in the ledger table: one head per action (its state, when it fired and
acted, dry or not) and one small item per instance or training job it acts on, so that no
record grows with the scope. Every write is conditional: an action is recorded once, and
a state only moves forward from the version read."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from shared.adapters import keys
from shared.adapters.table import Absent, ConditionFailed, Put, Table, VersionIs

ACTIONS = "ACTIONS"


@dataclass(frozen=True)
class ActionRecord:
    action_id: str
    budget_id: str
    period_key: str
    kind: str
    at_percent: int
    dry_run: bool
    state: str
    fired_at: datetime | None
    acted_at: datetime | None = None
    detail: str = ""
    released_by: str = ""
    released_at: datetime | None = None
    policy_arn: str = ""
    version: int = 0


@dataclass(frozen=True)
class ActionTarget:
    """One instance or training job an action stops (or, dry, would have stopped)."""

    kind: str  # "instance" or "training_job"
    target_id: str
    account: str
    region: str
    job_id: str
    result: str = ""  # "" while waiting; the stopper's result once acted
    acted_at: datetime | None = None
    extra: dict[str, str] = field(default_factory=dict)


def _time(value: Any) -> datetime | None:
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")) if value else None


class ActionStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    def get(self, action_id: str) -> ActionRecord | None:
        item = self.table.get(*keys.action_key(action_id))
        return None if item is None else record_of(item)

    def create(self, record: ActionRecord) -> bool:
        """Record a new action (before it acts); False when it is already recorded."""
        try:
            self.table.transact([Put(_item(record), [Absent()])])
        except ConditionFailed:
            return False
        return True

    def save(self, record: ActionRecord) -> ActionRecord | None:
        """Write the next version of a record read at ``record.version``; None when
        another writer moved it meanwhile (read it again)."""
        after = replace(record, version=record.version + 1)
        try:
            self.table.transact([Put(_item(after), [VersionIs(record.version)])])
        except ConditionFailed:
            return None
        return after

    def all(self) -> Iterator[ActionRecord]:
        for item in self.table.query(ACTIONS):
            yield record_of(item)

    def of_budget(self, budget_id: str) -> Iterator[ActionRecord]:
        """Every action of one budget, every period (its ids begin with the budget's)."""
        for item in self.table.query(ACTIONS, begins_with=keys.part(budget_id) + ":"):
            yield record_of(item)

    def mark_attached(self, budget_id: str, action_id: str) -> None:
        """A deny is about to be attached: the one record the lifting reads (so lifting
        never reads a budget's actions of every period)."""
        pk, sk = keys.attached_denial_key(budget_id, action_id)
        self.table.transact(
            [Put({"pk": pk, "sk": sk, "kind": "denial", "action_id": action_id}, [])]
        )

    def attached(self, budget_id: str) -> list[str]:
        """The budget's denials attached and not yet lifted (at most one per deny action
        and period still open, plus those lifted in the last two days until their TTL)."""
        pk, sk = keys.attached_denial_key(budget_id, "")
        return [
            str(item["action_id"])
            for item in self.table.query(pk, begins_with=sk)
            if not item.get("lifted_at")
        ]

    def attached_anywhere(self) -> list[tuple[str, str]]:
        """(budget id part, action id) of every denial not yet lifted, of any budget:
        one small partition (a marker per deny action and open period, lifted ones for
        two days), read to lift denials whose budget or deny rule is gone."""
        pk, _ = keys.attached_denial_key("", "")
        return [
            (str(item["sk"]).split("#", 1)[0], str(item["action_id"]))
            for item in self.table.query(pk)
            if not item.get("lifted_at")
        ]

    def mark_lifted(self, budget_id: str, action_id: str, now: datetime) -> None:
        pk, sk = keys.attached_denial_key(budget_id, action_id)
        item = {"pk": pk, "sk": sk, "kind": "denial", "action_id": action_id}
        stamp = {"lifted_at": now.isoformat(), "expires_at": int(now.timestamp()) + 2 * 86400}
        self.table.transact([Put(item | stamp, [])])

    def mark_waiting(self, job_id: str, record: ActionRecord, until: datetime) -> None:
        """A waiting stop of ``job_id``'s instances: what the job's next complete
        checkpoint wakes (one small item per job and action, expiring a day after the
        grace ends)."""
        pk, sk = keys.waiting_stop_key(job_id, record.action_id)
        item = {
            "pk": pk,
            "sk": sk,
            "kind": "waiting_stop",
            "action_id": record.action_id,
            "budget_id": record.budget_id,
            "period_key": record.period_key,
            "threshold": record.at_percent,
            "expires_at": int(until.timestamp()) + 86400,
        }
        self.table.transact([Put(item, [])])

    def waiting_on(self, job_id: str) -> list[tuple[str, str, str, int]]:
        """(action id, budget id, period key, threshold) of the stops waiting for this
        job's checkpoint (at most one per budget action: bounded by the budgets)."""
        pk, _ = keys.waiting_stop_key(job_id, "")
        return [
            (str(i["action_id"]), str(i["budget_id"]), str(i["period_key"]), int(i["threshold"]))
            for i in self.table.query(pk)
        ]

    def timer_claimed(self, budget_id: str, period_key: str, what: str, moment: datetime) -> bool:
        """Whether the timer of that moment was sent already (``claim_timer`` after it)."""
        return self.table.get(*keys.timer_key(budget_id, period_key, what, moment)) is not None

    def claim_timer(self, budget_id: str, period_key: str, what: str, moment: datetime) -> bool:
        """Claim the timer of one moment (a threshold's predicted crossing, a grace's end),
        once however many ticks see it; the claim expires a day after the moment (TTL)."""
        pk, sk = keys.timer_key(budget_id, period_key, what, moment)
        item = {"pk": pk, "sk": sk, "kind": "timer", "expires_at": int(moment.timestamp()) + 86400}
        try:
            self.table.transact([Put(item, [Absent()])])
        except ConditionFailed:
            return False
        return True

    def put_target(self, action_id: str, target: ActionTarget) -> None:
        pk, sk = keys.action_target_key(action_id, target.kind, target.account, target.target_id)
        item = {
            "pk": pk,
            "sk": sk,
            "kind": target.kind,
            "target_id": target.target_id,
            "account": target.account,
            "region": target.region,
            "job_id": target.job_id,
            "result": target.result,
            "acted_at": keys.iso(target.acted_at) if target.acted_at else "",
            **{f"x_{k}": v for k, v in target.extra.items()},
        }
        self.table.transact([Put(item)])

    def targets(self, action_id: str) -> list[ActionTarget]:
        pk = keys.action_target_key(action_id, "", "", "")[0]
        return [
            ActionTarget(
                kind=str(item["kind"]),
                target_id=str(item["target_id"]),
                account=str(item.get("account", "")),
                region=str(item.get("region", "")),
                job_id=str(item.get("job_id", "")),
                result=str(item.get("result", "")),
                acted_at=_time(item.get("acted_at")),
                extra={k[2:]: str(v) for k, v in item.items() if k.startswith("x_")},
            )
            for item in self.table.query(pk, begins_with="T#")
        ]


def _item(record: ActionRecord) -> dict[str, Any]:
    pk, sk = keys.action_key(record.action_id)
    return {
        "pk": pk,
        "sk": sk,
        "kind": "budget_action",
        "action_id": record.action_id,
        "budget_id": record.budget_id,
        "period_key": record.period_key,
        "action": record.kind,
        "at_percent": record.at_percent,
        "dry_run": record.dry_run,
        "state": record.state,
        "fired_at": keys.iso(record.fired_at) if record.fired_at else "",
        "acted_at": keys.iso(record.acted_at) if record.acted_at else "",
        "detail": record.detail,
        "released_by": record.released_by,
        "released_at": keys.iso(record.released_at) if record.released_at else "",
        "policy_arn": record.policy_arn,
        "version": record.version,
    }


def record_of(item: dict[str, Any]) -> ActionRecord:
    return ActionRecord(
        action_id=str(item["action_id"]),
        budget_id=str(item["budget_id"]),
        period_key=str(item["period_key"]),
        kind=str(item["action"]),
        at_percent=int(item["at_percent"]),
        dry_run=bool(item["dry_run"]),
        state=str(item["state"]),
        fired_at=_time(item.get("fired_at")),
        acted_at=_time(item.get("acted_at")),
        detail=str(item.get("detail", "")),
        released_by=str(item.get("released_by", "")),
        released_at=_time(item.get("released_at")),
        policy_arn=str(item.get("policy_arn", "")),
        version=int(item.get("version", 0)),
    )
