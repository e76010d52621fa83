"""Per-job (and account) rollups: accrual totals and one-way facts of a job, one item
per job and account (``JOB#<job>`` / ``R#<account>``), all in the rollups-index so the
job list and every budget read them with one Query."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from functools import partial
from typing import Any

from shared.adapters import keys
from shared.adapters import ledger_schema as schema
from shared.adapters.table import Above, Below, Condition, Item, Table, Update, apply_update
from shared.adapters.unit_of_work import UnitOfWork
from shared.domain import accrual as acc
from shared.domain.accrual import Accrual
from shared.domain.index_facts import ROLLUP
from shared.domain.job import TAG, TAG_FROM


@dataclass
class RollupChange:
    """A change to one job's rollup: accrual deltas and facts that only move one way."""

    job_id: str
    account: str
    delta: Accrual = field(default_factory=Accrual)
    # name -> value, kept as the minimum / maximum of what writers report
    at_least: dict[str, str] = field(default_factory=dict)
    at_most: dict[str, str] = field(default_factory=dict)
    add_strings: dict[str, set[str]] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)
    # Grouping tags of the reporting record, and when it first ran (``<time>#<record id>``,
    # sortable): each key is kept from the earliest record that carries it.
    tags: dict[str, str] | None = None
    tags_from: str | None = None


# A rollup counter of the writes that changed a job's past (an event older than the day
# it was applied on, a price filled in later): a figure computed for a past moment stays
# right while the job's counters are unchanged.
PAST_CHANGES = "past_changes"
# Spends at past moments a container keeps at most (a day's period starts for every job,
# and more): cleared when full.
MAX_BOOKED_SPENDS = 50_000


class RollupStore:
    """Per-job (and account) rollups in one partition: the job list and budgets read
    them all with one Query."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self._cache: dict[tuple[str, str], Item] = {}
        # Per container: (job, moment) -> (the job's past-changes stamp, its spend then).
        self._books: dict[tuple[str, datetime], tuple[tuple[tuple[str, int], ...], Decimal]] = {}

    def cached(self, job_id: str, account: str) -> Item | None:
        key = (job_id, account)
        if key not in self._cache:
            item = self.table.get(keys.job_pk(job_id), keys.rollup_sk(account))
            self._cache[key] = item or {}
        return self._cache[key] or None

    def _forget(self, job_id: str, account: str) -> None:
        self._cache.pop((job_id, account), None)

    def stage(self, uow: UnitOfWork, change: RollupChange) -> Update | None:
        """Stage the change's operation (None: it changes nothing); once written the
        rollup is kept as written, and on a conflict the copy it was built from (read
        even when nothing changed) is forgotten."""
        op = self._update(change)
        uow.add(
            op,
            on_commit=None if op is None else partial(self._remember, change, op),
            on_conflict=partial(self._forget, change.job_id, change.account),
        )
        return op

    def _update(self, change: RollupChange) -> Update | None:
        """The operation for a change, or None when it changes nothing."""
        current = self.cached(change.job_id, change.account) or {}
        add: dict[str, Any] = acc.to_attributes(change.delta)  # a new dict: ours to extend
        add.update({k: Decimal(v) for k, v in change.counters.items() if v})
        for name, values in change.add_strings.items():
            missing = values.difference(current.get(name, ()))
            if missing:
                add[name] = set(missing)
        sets: dict[str, Any] = {}
        conditions: list[Condition] = []
        for name, value in change.at_least.items():
            if name not in current or current[name] < value:
                sets[name] = value
                conditions.append(Below(name, value))
        for name, value in change.at_most.items():
            if name not in current or current[name] > value:
                sets[name] = value
                conditions.append(Above(name, value))
        if change.tags_from is not None:
            # Each grouping key on its own: a record without the key has no say in it.
            for key, value in (change.tags or {}).items():
                since = TAG_FROM + key
                if since not in current or current[since] > change.tags_from:
                    sets[since] = change.tags_from
                    sets[TAG + key] = value
                    conditions.append(Above(since, change.tags_from))
        if not add and not sets and current:
            return None
        return Update(
            keys.job_pk(change.job_id),
            keys.rollup_sk(change.account),
            add=add,
            set=sets,
            set_if_absent=_identity_missing(change, current),
            conditions=conditions,
        )

    def _remember(self, change: RollupChange, op: Update) -> None:
        """Keep the rollup as written. The copy it replaces is this store's alone and only
        read (``_update``), and ``apply_update`` makes new sets for what it adds: the sets
        left unchanged are shared with the new copy, not copied again (``mutable=()``)."""
        key = (change.job_id, change.account)
        self._cache[key] = apply_update(self._cache.get(key) or None, op, mutable=())

    def booked_spend(self, job_id: str, at: datetime, rollups: list[Item]) -> Decimal | None:
        """The job's spend at ``at`` as booked by this container, while its ``rollups``
        (all of the job's, as read now) say no write has changed its past since."""
        booked = self._books.get((job_id, at))
        if booked is None or booked[0] != _past_stamp(rollups):
            return None
        return booked[1]

    def book_spend(self, job_id: str, at: datetime, rollups: list[Item], spend: Decimal) -> None:
        """Keep the job's spend at ``at`` (computed from its records) for later reads."""
        if len(self._books) >= MAX_BOOKED_SPENDS:
            self._books.clear()
        self._books[(job_id, at)] = (_past_stamp(rollups), spend)

    def all(self) -> list[Item]:
        return list(self.table.query(schema.ROLLUPS, index=schema.ROLLUPS_INDEX.name))

    def of_job(self, job_id: str) -> list[Item]:
        return list(self.table.query(keys.job_pk(job_id), begins_with="R#"))


# What names a rollup and puts it in the rollups-index: the same names for every rollup.
IDENTITY_NAMES = frozenset({"job_id", "account", "kind", *schema.index_entries(ROLLUP, "").keys()})


def _identity_missing(change: RollupChange, current: Item) -> dict[str, Any]:
    """The identity attributes the rollup does not hold yet: what it is known to hold is
    not sent again (nothing of the ledger is ever deleted or removed from a rollup, so it
    is still there). A rollup read or written once holds them all: nothing to build."""
    if IDENTITY_NAMES.issubset(current):
        return {}
    identity = {
        "job_id": change.job_id,
        "account": change.account,
        "kind": "rollup",
        **schema.index_entries(ROLLUP, keys.rollup_index_sk(change.job_id, change.account)),
    }
    return {k: v for k, v in identity.items() if k not in current}


def _past_stamp(rollups: list[Item]) -> tuple[tuple[str, int], ...]:
    """Each account's count of the writes that changed the job's past."""
    return tuple(sorted((str(r.get("account", "")), int(r.get(PAST_CHANGES, 0))) for r in rollups))
