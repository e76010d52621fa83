"""Reconciliation by resource: a replayed ledger's FOCUS export against a small hand-made
AWS Data Exports (CUR 2.0) Parquet file, worked by hand.

Scenario tests/scenarios/three_days.json, day 2026-11-02 (see test_replay_daily_summaries):
alpha-pretrain  i-0c3d0000000000aa1  24 h x $21.50            = 516.00
                its 100 GiB gp3 volume, 86,400 s x $8/month    =   0.2666666667
beta-sweep      i-0c3d0000000000bb2  spot, 90 s billed x $20/h =   0.50
The bill (hand-made): aa1 23 hours at 21.50 and one at 21.49 (515.99), the volume 0.27,
data transfer out of aa1 1.35; bb2 0.50 and 0.02 of regional transfer; an instance of no
job (3.00, unallocated) and a tax line (no resource: ignored).
alpha: estimated 516.2666666667, billed 516.26, difference 0.0066666667, transfer 1.35.
beta:  estimated 0.50, billed 0.50, difference 0, transfer 0.02.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from costtracker.fakes.scenario_aws import volume_id_for
from costtracker.replay import replay
from costtracker.scenario import Scenario
from shared.services.data_exports import (
    billed_lines,
    estimates_from_focus_rows,
    reconcile_resources,
    rows_from_parquet,
)
from tests.integration.conftest import scenario_dict

DAY = datetime(2026, 11, 2, tzinfo=UTC)
ALPHA, BETA = "i-0c3d0000000000aa1", "i-0c3d0000000000bb2"
VOLUME = volume_id_for(ALPHA, "/dev/sdf")
_TIME, _TEXT = pa.timestamp("us", tz="UTC"), pa.string()
CUR = pa.schema(
    [
        ("bill_invoice_id", _TEXT),
        ("line_item_line_item_type", _TEXT),
        ("line_item_usage_start_date", _TIME),
        ("line_item_usage_end_date", _TIME),
        ("line_item_product_code", _TEXT),
        ("line_item_usage_type", _TEXT),
        ("line_item_resource_id", _TEXT),
        ("line_item_usage_amount", pa.float64()),
        ("line_item_unblended_cost", pa.float64()),
        ("resource_tags", _TEXT),
    ]
)


def line(hour: int, product: str, usage: str, resource: str | None, usd: float,
         kind: str = "Usage", invoice: str | None = None) -> dict[str, Any]:  # fmt: skip
    start = DAY + timedelta(hours=hour)
    return {
        "bill_invoice_id": invoice, "line_item_line_item_type": kind,
        "line_item_usage_start_date": start, "line_item_usage_end_date": start + timedelta(hours=1),
        "line_item_product_code": product, "line_item_usage_type": usage,
        "line_item_resource_id": resource, "line_item_usage_amount": 1.0,
        "line_item_unblended_cost": usd, "resource_tags": None,
    }  # fmt: skip


def bill(invoice: str | None = None) -> bytes:
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
    out = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=CUR), out)
    return out.getvalue()


@pytest.fixture(scope="module")
def focus_rows(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    root = tmp_path_factory.mktemp("focus")
    replay(Scenario.model_validate(scenario_dict("three_days.json")), focus_dir=root)
    rows: list[dict[str, Any]] = pq.read_table(
        Path(root) / "focus/2026/11/02/focus-1.2.parquet"
    ).to_pylist()
    return rows


def test_each_job_and_resource_against_the_bill(focus_rows: list[dict[str, Any]]) -> None:
    result = reconcile_resources(
        estimates_from_focus_rows(focus_rows),
        billed_lines(rows_from_parquet(bill(), "bill.parquet")),
    )
    jobs = {j["job_id"]: j for j in result["jobs"]}
    assert set(jobs) == {"alpha-pretrain", "beta-sweep"}
    alpha, beta = jobs["alpha-pretrain"], jobs["beta-sweep"]
    assert alpha["date"] == "2026-11-02" and alpha["status"] == "estimated"
    assert Decimal(alpha["estimated_usd"]) == Decimal("516.266666667")
    assert Decimal(alpha["billed_usd"]) == Decimal("516.26")
    assert Decimal(alpha["difference_usd"]) == Decimal("0.006666667")
    assert Decimal(alpha["unconfirmed_billed_usd"]["data_transfer"]) == Decimal("1.35")
    by_resource = {r["resource_id"]: r for r in alpha["resources"]}
    assert Decimal(by_resource[ALPHA]["difference_usd"]) == Decimal("0.01")
    assert Decimal(by_resource[VOLUME]["difference_usd"]) == Decimal("-0.003333333")
    assert by_resource[VOLUME]["kinds"] == ["ebs_volume"]
    assert Decimal(beta["estimated_usd"]) == Decimal(beta["billed_usd"]) == Decimal("0.5")
    assert Decimal(beta["difference_usd"]) == 0
    assert Decimal(beta["unconfirmed_billed_usd"]["data_transfer"]) == Decimal("0.02")
    assert result["unallocated"] == [
        {"date": "2026-11-02", "resource_id": "i-0fffffffffffffff0", "billed_usd": "3.000000000"}
    ]


def test_an_invoiced_day_is_confirmed(focus_rows: list[dict[str, Any]]) -> None:
    result = reconcile_resources(
        estimates_from_focus_rows(focus_rows),
        billed_lines(rows_from_parquet(bill(invoice="EUINUS26-0001"), "bill.parquet")),
    )
    assert {j["status"] for j in result["jobs"]} == {"confirmed"}
