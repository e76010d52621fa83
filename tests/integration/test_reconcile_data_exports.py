"""Reconciliation by resource, wired: the reconcile function reads a hand-made AWS Data
Exports file (CUR 2.0 Parquet as AWS writes it: Snappy pages, dictionary encoding, map
columns) from the configured bucket and prefix, with pyarrow, and sets
a replayed ledger's estimates against it.

The bill and its hand calculation are those of tests/integration/test_data_exports.py
(scenario three_days.json, day 2026-11-02):
alpha-pretrain: estimated 516.2666666667 (24 h x $21.50 + the volume's 0.2666666667),
                billed 515.99 + 0.27 = 516.26, difference 0.0066666667, transfer 1.35.
beta-sweep:     estimated 0.50, billed 0.50, difference 0, transfer 0.02.
"""

from __future__ import annotations

import io
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from costtracker.lambda_context import FakeLambdaContext
from costtracker.replay import replay_session
from costtracker.scenario import Scenario
from shared.adapters.data_exports import S3ExportFiles
from shared.app import runtime
from shared.config.ledger import LedgerConfig
from shared.services.data_exports import DataExports
from shared.services.reconcile import reconcile_by_resource
from tests.aws_events import scheduled_event
from tests.integration.conftest import scenario_dict
from tests.integration.test_data_exports import ALPHA, BETA, DAY, VOLUME, line

BUCKET, PREFIX = "cur-exports", "cur2/costtracker"
KEY = f"{PREFIX}/costtracker-cur2/data/BILLING_PERIOD=2026-11/costtracker-cur2-00001.snappy.parquet"
CONFIG = {"reconcile": {"enabled": True, "data_exports_bucket": BUCKET,
                        "data_exports_prefix": PREFIX}}  # fmt: skip


def cur_file(invoice: str | None = None) -> bytes:
    """The hand-made bill as AWS writes CUR 2.0: Snappy, dictionary pages, map columns."""
    rows = [line(h, "AmazonEC2", "BoxUsage:trn1.32xlarge", ALPHA, 21.49 if h == 5 else 21.5,
                 invoice=invoice) for h in range(24)]  # fmt: skip
    rows += [
        line(0, "AmazonEC2", "EBS:VolumeUsage.gp3", VOLUME, 0.27, invoice=invoice),
        line(3, "AWSDataTransfer", "DataTransfer-Out-Bytes", ALPHA, 1.35, invoice=invoice),
        line(12, "AmazonEC2", "SpotUsage:p5.48xlarge", BETA, 0.5, invoice=invoice),
        line(12, "AmazonEC2", "DataTransfer-Regional-Bytes", BETA, 0.02, invoice=invoice),
        line(7, "AmazonEC2", "BoxUsage:m5.large", "i-0fffffffffffffff0", 3.0, invoice=invoice),
        line(0, "AmazonEC2", "BoxUsage:trn1.32xlarge", None, 4.2, kind="Tax", invoice=invoice),
    ]
    columns: dict[str, Any] = {k: [r[k] for r in rows] for k in rows[0] if k != "resource_tags"}
    table = pa.table(
        {
            **columns,
            "line_item_usage_start_date": pa.array(
                columns["line_item_usage_start_date"], pa.timestamp("ms", tz="UTC")
            ),
            "line_item_usage_end_date": pa.array(
                columns["line_item_usage_end_date"], pa.timestamp("ms", tz="UTC")
            ),
            "resource_tags": pa.array(
                [
                    {"user_training_job": "alpha-pretrain"}
                    if r["line_item_resource_id"] == ALPHA
                    else {}
                    for r in rows
                ],
                pa.map_(pa.string(), pa.string()),
            ),
            "product": pa.array(
                [{"region": "us-east-1"}] * len(rows), pa.map_(pa.string(), pa.string())
            ),
        }
    )
    out = io.BytesIO()
    pq.write_table(table, out, compression="snappy", use_dictionary=True)
    return out.getvalue()


@pytest.fixture(scope="module")
def replayed() -> Any:
    scenario = Scenario.model_validate(scenario_dict("three_days.json"))
    with replay_session(scenario, LedgerConfig.model_validate(CONFIG)) as replayer:
        replayer.run()
        s3 = replayer.emulator.client("s3")
        s3.create_bucket(Bucket=BUCKET)
        s3.put_object(Bucket=BUCKET, Key=KEY, Body=cur_file())
        # Not read: another bill period, a manifest, another export's prefix.
        s3.put_object(Bucket=BUCKET, Key=KEY.replace("2026-11", "2026-08"), Body=b"not parquet")
        s3.put_object(Bucket=BUCKET, Key=f"{PREFIX}/costtracker-cur2/metadata/m.json", Body=b"{}")
        s3.put_object(Bucket=BUCKET, Key="other/BILLING_PERIOD=2026-11/x.parquet", Body=b"x")
        yield replayer


def test_the_reconcile_function_reconciles_each_job_by_resource_with_the_export(
    replayed: Any,
) -> None:
    from functions.reconcile.handler import handler

    event = scheduled_event("r-1", "2026-11-04T06:00:00Z")
    answer = handler(event, FakeLambdaContext("reconcile"))
    assert answer["enabled"] is True and "2026-11-02" in answer["days"]
    stored = runtime.reconciliation_store().get_reconciliations([DAY.date()])[DAY.date()]
    jobs = {j["job_id"]: j for j in stored["by_resource"]["jobs"]}
    alpha, beta = jobs["alpha-pretrain"], jobs["beta-sweep"]
    # Per-job differences equal the hand calculation.
    assert Decimal(alpha["estimated_usd"]) == Decimal("516.266666667")
    assert Decimal(alpha["billed_usd"]) == Decimal("516.26")
    assert Decimal(alpha["difference_usd"]) == Decimal("0.006666667")
    assert Decimal(beta["estimated_usd"]) == Decimal(beta["billed_usd"]) == Decimal("0.5")
    assert Decimal(beta["difference_usd"]) == 0
    # Data transfer: unconfirmed in the estimate, a billed figure here.
    assert Decimal(alpha["unconfirmed_billed_usd"]["data_transfer"]) == Decimal("1.35")
    assert Decimal(beta["unconfirmed_billed_usd"]["data_transfer"]) == Decimal("0.02")
    assert {j["status"] for j in jobs.values()} == {"estimated"}  # no invoice id yet
    by_resource = {r["resource_id"]: r for r in alpha["resources"]}
    assert Decimal(by_resource[ALPHA]["difference_usd"]) == Decimal("0.01")
    assert stored["by_resource"]["unallocated"] == [
        {"date": "2026-11-02", "resource_id": "i-0fffffffffffffff0", "billed_usd": "3.000000000"}
    ]


def test_an_invoiced_bill_period_is_confirmed(replayed: Any) -> None:
    s3 = replayed.emulator.client("s3")
    s3.put_object(Bucket=BUCKET, Key=KEY, Body=cur_file(invoice="EUINUS26-0001"))
    exports = DataExports(S3ExportFiles(runtime.client("s3"), BUCKET, PREFIX))
    result = reconcile_by_resource(
        runtime.ledger_deps(), exports, DAY.date(), runtime.clock().now()
    )
    assert {j["status"] for j in result["jobs"]} == {"confirmed"}
    differences = {j["job_id"]: Decimal(j["difference_usd"]) for j in result["jobs"]}
    assert differences == {"alpha-pretrain": Decimal("0.006666667"), "beta-sweep": 0}


class FinalBills:
    """Cost Explorer says the day is final (and bills nothing by tag)."""

    def billed_day(self, day: Any, job_tag_key: str) -> Any:
        from shared.adapters.cost_explorer import BilledDay

        return BilledDay(final=True, by_job={})


def test_an_unreadable_export_is_said_in_one_line_and_read_again_next_run(replayed: Any) -> None:
    from shared.services.reconcile import reconcile_day

    s3 = replayed.emulator.client("s3")
    s3.put_object(Bucket=BUCKET, Key=KEY, Body=b"PAR1 truncated")
    config = LedgerConfig.model_validate(CONFIG)
    ledger, now = runtime.reconciliation_store(), runtime.clock().now()

    def run() -> dict[str, Any]:
        exports = DataExports(S3ExportFiles(runtime.client("s3"), BUCKET, PREFIX))
        return reconcile_day(
            runtime.ledger_deps(), ledger, config, FinalBills(), DAY.date(), now, exports
        )

    broken = run()["by_resource"]
    assert broken["jobs"] == [] and "\n" not in broken["error"]
    assert broken["error"].startswith(f"s3://{BUCKET}/{KEY}: not a readable Parquet file")
    # Cost Explorer's day is final, but the export was not read: the next run reads it.
    s3.put_object(Bucket=BUCKET, Key=KEY, Body=cur_file(invoice="EUINUS26-0001"))
    fixed = run()["by_resource"]
    assert {j["status"] for j in fixed["jobs"]} == {"confirmed"}
    # Now settled: stored and never read again.
    s3.put_object(Bucket=BUCKET, Key=KEY, Body=b"PAR1 truncated")
    assert run()["by_resource"] == fixed
