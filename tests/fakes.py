"""In-memory twins of the AWS-facing interfaces, for unit tests (no network).

The ledger's own records (instances, checkpoints, rollups) are the real stores over the
in-memory table (``tests.support.memory_ledger``); what is left here is the records that
are not theirs yet: budgets, the price cache, one-time claims, daily summaries and
reconciliations.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from shared.domain.base import Rate
from shared.domain.budgets import Budget
from shared.domain.instance import InstanceProfile
from shared.inventory import InstanceNotFound
from shared.notify import Alert


class InMemoryLedger:
    """Twin of the DynamoDB records of their own: budgets, price cache, claims, summaries
    and reconciliations (dicts for storage, the same contract)."""

    def __init__(self) -> None:
        self.prices: dict[str, Rate] = {}
        self.claims: set[str] = set()
        self.budgets: dict[str, Budget | None] = {}
        self.budget_changes: dict[str, list[dict[str, Any]]] = {}
        self.summaries: dict[date, dict[str, Any]] = {}
        self.reconciliations: dict[date, dict[str, Any]] = {}

    # -- budgets (None: deleted through the API, which wins over the configured one) ----
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

    # -- daily summaries and reconciliations ---------------------------------------------
    def put_summary(self, day: date, summary: dict[str, Any]) -> None:
        self.summaries[day] = summary

    def get_summaries(self, days: Sequence[date]) -> dict[date, dict[str, Any]]:
        return {d: self.summaries[d] for d in days if d in self.summaries}

    def put_reconciliation(self, day: date, result: dict[str, Any]) -> None:
        self.reconciliations[day] = result

    def get_reconciliations(self, days: Sequence[date]) -> dict[date, dict[str, Any]]:
        return {d: self.reconciliations[d] for d in days if d in self.reconciliations}

    # -- the price cache (``shared.adapters.pricing.PriceCache``) ---------------------------------
    def get_price(self, key: str) -> Rate | None:
        return self.prices.get(key)

    def put_price(self, key: str, rate: Rate) -> None:
        self.prices[key] = rate

    # -- one-time claims (alerts sent once) ---------------------------------------------
    def claim_once(self, key: str, expires_at: datetime) -> bool:
        if key in self.claims:
            return False
        self.claims.add(key)
        return True


class FakeInventory:
    """DescribeInstances twin: the given profiles; any other instance is not found."""

    def __init__(self, *profiles: InstanceProfile) -> None:
        self.profiles = {p.instance_id: p for p in profiles}
        self.calls = 0

    def describe(self, instance_id: str, region: str, account: str = "") -> InstanceProfile:
        self.calls += 1
        if instance_id not in self.profiles:
            raise InstanceNotFound(instance_id)
        return self.profiles[instance_id]


class RecordingNotifier:
    def __init__(self) -> None:
        self.sent: list[Alert] = []

    def send(self, alert: Alert) -> None:
        self.sent.append(alert)
