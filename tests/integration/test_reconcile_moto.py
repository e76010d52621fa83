"""Reconciliation with the bill against moto's Cost Explorer (canned results)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import boto3
import pytest
import requests
from moto import mock_aws

from costtracker.lambda_context import FakeLambdaContext
from shared.adapters import ledger_schema
from shared.adapters.cost_explorer import CostExplorerBills
from shared.adapters.daily_store import ReconciliationStore
from shared.adapters.table import DynamoTable
from shared.app import runtime
from shared.config.ledger import LedgerConfig
from shared.domain.clock import FixedClock
from shared.services.reconcile import reconcile_day
from tests.aws_events import ec2_state_event
from tests.support import moto_instance

TABLE = "ledger-reconcile"
DAY = date(2026, 11, 1)
NOW = datetime(2026, 11, 4, 6, tzinfo=UTC)
CONFIG = LedgerConfig.model_validate(
    {
        "live_prices": False,
        "prices": {"ec2": {"trn1.32xlarge": "20"}},
        "reconcile": {"enabled": True},
    }
)


def ce_result(estimated: bool, groups: list[tuple[str, str, str]]) -> dict[str, Any]:
    return {
        "GroupDefinitions": [
            {"Type": "TAG", "Key": "training-job"},
            {"Type": "DIMENSION", "Key": "SERVICE"},
        ],
        "ResultsByTime": [
            {
                "TimePeriod": {"Start": "2026-11-01", "End": "2026-11-02"},
                "Total": {},
                "Estimated": estimated,
                "Groups": [
                    {
                        "Keys": [f"training-job${job}", service],
                        "Metrics": {"UnblendedCost": {"Amount": usd, "Unit": "USD"}},
                    }
                    for job, service, usd in groups
                ],
            }
        ],
    }


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[ReconciliationStore]:
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(**ledger_schema.create_table_request(TABLE))
        ec2 = boto3.client("ec2", region_name="us-east-1")
        iid = moto_instance(ec2, "trn1.32xlarge", {"training-job": "llama"})
        monkeypatch.setenv("TABLE_NAME", TABLE)
        monkeypatch.setenv("LEDGER_CONFIG", CONFIG.model_dump_json())
        with runtime.override(FixedClock(NOW)):
            from functions.instance_state.handler import handler

            for eid, at, state in (
                ("r", "2026-11-01T10:00:00Z", "running"),
                ("s", "2026-11-01T20:00:00Z", "stopped"),
            ):
                handler(ec2_state_event(eid, iid, state, at), FakeLambdaContext("test"))
            yield ReconciliationStore(DynamoTable(client, TABLE))


def queue_ce(*results: dict[str, Any]) -> None:
    response = requests.post(
        "http://motoapi.amazonaws.com/moto-api/static/ce/cost-and-usage-results",
        json={"results": list(results)},
        timeout=10,
    )
    assert response.status_code == 201


def test_final_day_is_confirmed_with_differences_and_billed_unconfirmed_items(
    aws: ReconciliationStore,
) -> None:
    # Our estimate: 10 h x $20 = $200. The bill: $198 compute, $1.50 data transfer.
    queue_ce(
        ce_result(
            False,
            [
                ("llama", "Amazon Elastic Compute Cloud - Compute", "198.00"),
                ("llama", "AWS Data Transfer", "1.50"),
            ],
        )
    )
    bills = CostExplorerBills(boto3.client("ce", region_name="us-east-1"))
    result = reconcile_day(runtime.ledger_deps(), aws, CONFIG, bills, DAY, NOW)
    job = result["jobs"]["llama"]
    assert (result["status"], job["status"]) == ("confirmed", "confirmed")
    assert Decimal(job["estimated_usd"]) == Decimal(200)
    assert Decimal(job["billed_usd"]) == Decimal(198)
    assert Decimal(job["difference_usd"]) == Decimal(2)
    assert job["difference_pct"] == "1.01"
    assert Decimal(job["unconfirmed_billed_usd"]["data_transfer"]) == Decimal("1.5")
    # A final day is cached: asking again makes no Cost Explorer request ($0.01 each).
    calls: list[str] = []
    bills_client = boto3.client("ce", region_name="us-east-1")
    bills_client.meta.events.register("before-call.ce.*", lambda **kw: calls.append("ce"))
    reconcile_day(runtime.ledger_deps(), aws, CONFIG, CostExplorerBills(bills_client), DAY, NOW)
    assert calls == []


def test_a_day_the_bill_does_not_have_yet_stays_estimated(aws: ReconciliationStore) -> None:
    queue_ce(ce_result(True, [("llama", "Amazon Elastic Compute Cloud - Compute", "150")]))
    bills = CostExplorerBills(boto3.client("ce", region_name="us-east-1"))
    result = reconcile_day(runtime.ledger_deps(), aws, CONFIG, bills, DAY, NOW)
    assert result["status"] == "estimated" and result["jobs"]["llama"]["status"] == "estimated"
    stored = aws.get_reconciliations([DAY])[DAY]
    assert stored["final"] is False


def test_a_day_of_10000_reconciled_jobs_is_stored_bounded() -> None:
    """Issue 27: the jobs furthest from the bill are kept (``RECONCILED_JOBS``), the rest
    counted and summed; the document is stored in parts, each under the item bound."""
    from datetime import date as date_

    from shared.adapters.daily_store import ReconciliationStore
    from shared.adapters.items import dump
    from shared.adapters.table import MemoryTable
    from shared.domain import limits
    from shared.reports.formatting import money
    from shared.services.reconcile import bounded_reconciliation

    def row(n: int) -> dict[str, Any]:
        kinds = ("instance", "ebs", "checkpoint_storage")
        return {
            "estimated_usd": f"{n}.00",
            "billed_usd": "1.00",
            "difference_usd": f"{n - 1}.00",
            "difference_pct": "1.0",
            "by_kind": {k: {"estimated_usd": "1.00", "billed_usd": "1.00"} for k in kinds},
            "unconfirmed_billed_usd": {k: "0.00" for k in ("data_transfer", "cloudwatch")},
            "status": "confirmed",
        }

    jobs = {f"job-{n:05d}": row(n) for n in range(1, 10_001)}
    result = bounded_reconciliation({"date": "2026-11-01", "final": True, "jobs": jobs})
    kept = limits.RECONCILED_JOBS
    assert len(result["jobs"]) == kept and result["jobs_count"] == 10_000
    assert min(result["jobs"]) == f"job-{10_001 - kept:05d}"  # the furthest from the bill
    rest = range(1, 10_001 - kept)
    assert result["other_jobs"] == {
        "count": 10_000 - kept,
        "estimated_usd": money(Decimal(sum(rest))),
        "billed_usd": money(Decimal(len(rest))),
    }
    table = MemoryTable()
    store = ReconciliationStore(table)
    store.put_reconciliation(date_(2026, 11, 1), result)
    assert store.get_reconciliations([date_(2026, 11, 1)])[date_(2026, 11, 1)] == result
    assert max(len(dump(i).encode()) for i in table.items.values()) < limits.ITEM_BYTES
