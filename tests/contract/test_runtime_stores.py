"""The deployed functions get each store from ``shared.runtime``, all over the one
DynamoDB table the stack names, and what one store writes another container reads."""

from __future__ import annotations

from datetime import date

import boto3
import pytest
from moto import mock_aws

from shared.adapters import ledger_schema
from shared.adapters.budget_store import BudgetStore
from shared.adapters.daily_store import ReconciliationStore, SummaryStore
from shared.adapters.price_cache_store import PriceCacheStore
from shared.adapters.table import DynamoTable
from shared.app import runtime
from shared.config.budgets import Budget
from shared.config.ledger import LedgerConfig


def test_each_store_is_built_over_the_stacks_table(monkeypatch: pytest.MonkeyPatch) -> None:
    with mock_aws():
        boto3.client("dynamodb", region_name="us-east-1").create_table(
            **ledger_schema.create_table_request("wired")
        )
        monkeypatch.setenv("TABLE_NAME", "wired")
        monkeypatch.setenv("LEDGER_CONFIG", LedgerConfig(live_prices=False).model_dump_json())
        runtime.reset()
        try:
            table = runtime.current().table
            assert isinstance(table, DynamoTable)
            built = [
                (runtime.budget_store(), BudgetStore),
                (runtime.price_cache_store(), PriceCacheStore),
                (runtime.summary_store(), SummaryStore),
                (runtime.reconciliation_store(), ReconciliationStore),
                (runtime.ledger_deps().prices._cache, PriceCacheStore),
            ]
            for store, kind in built:
                assert isinstance(store, kind) and store.table is table
            rt = runtime.current()
            assert all(
                s.table is table for s in (rt.instance_store, rt.rollup_store, rt.checkpoint_store)
            )
            budget = Budget.model_validate(
                {"budget_id": "b1", "amount_usd": "10", "scope": {"account": True}}
            )
            runtime.budget_store().put_budget(budget)
            runtime.summary_store().put_summary(date(2026, 11, 1), {"total_usd": "1"})
            runtime.reset()  # a new container
            assert runtime.budget_store().stored_budgets() == {"b1": budget}
            assert runtime.summary_store().get_summaries([date(2026, 11, 1)]) == {
                date(2026, 11, 1): {"total_usd": "1"}
            }
        finally:
            runtime.reset()
