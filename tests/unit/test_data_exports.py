"""Reconciliation by resource: billing ids, kinds of line, shared buckets, bad files."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest

from shared.services.data_exports import (
    BilledLine,
    DataExportError,
    ResourceEstimate,
    billed_lines,
    billing_resource,
    line_kind,
    reconcile_resources,
    rows_from_parquet,
)

DAY = date(2026, 11, 2)


@pytest.mark.parametrize(
    ("usage", "product", "kind"),
    [
        ("BoxUsage:trn1.32xlarge", "AmazonEC2", "instance"),
        ("USE2-SpotUsage:p5.48xlarge", "AmazonEC2", "instance"),
        ("EBS:VolumeUsage.gp3", "AmazonEC2", "ebs_volume"),
        ("EUC1-EBS:VolumeP-IOPS.io2", "AmazonEC2", "ebs_iops"),
        ("EBS:VolumeP-Throughput.gp3", "AmazonEC2", "ebs_throughput"),
        ("TimedStorage-ByteHrs", "AmazonS3", "checkpoint_storage"),
        ("DataTransfer-Out-Bytes", "AWSDataTransfer", "data_transfer"),
        ("USE2-USE1-AWS-Out-Bytes", "AmazonEC2", "data_transfer"),
        ("CW:MetricMonitorUsage", "AmazonCloudWatch", "cloudwatch"),
        ("Requests-Tier1", "AmazonS3", "other"),
    ],
)
def test_line_kinds(usage: str, product: str, kind: str) -> None:
    assert line_kind(usage, product) == kind


def test_billing_resource_of_an_s3_object_is_its_bucket() -> None:
    assert billing_resource("arn:aws:s3:::ckpt/llama/step-1.pt") == "ckpt"
    assert billing_resource("i-0a1a") == "i-0a1a"


def test_a_shared_bucket_is_split_by_the_jobs_estimates() -> None:
    estimates = [
        ResourceEstimate("a", DAY, "arn:aws:s3:::ckpt/a/1.pt", "checkpoint_storage",
                         Decimal("0.3")),
        ResourceEstimate("a", DAY, "arn:aws:s3:::ckpt/a/2.pt", "checkpoint_storage",
                         Decimal("0.3")),
        ResourceEstimate("b", DAY, "arn:aws:s3:::ckpt/b/1.pt", "checkpoint_storage",
                         Decimal("0.2")),
    ]  # fmt: skip
    lines = [
        BilledLine("ckpt", DAY, Decimal("1.2"), "checkpoint_storage", "TimedStorage-ByteHrs", True),
        BilledLine("ckpt", DAY, Decimal("0.08"), "other", "Requests-Tier1", True),
    ]
    jobs = {j["job_id"]: j for j in reconcile_resources(estimates, lines)["jobs"]}
    assert Decimal(jobs["a"]["billed_usd"]) == Decimal("0.9")
    assert Decimal(jobs["b"]["billed_usd"]) == Decimal("0.3")
    assert Decimal(jobs["a"]["unconfirmed_billed_usd"]["other"]) == Decimal("0.06")
    assert jobs["a"]["resources"][0]["estimated_ids"] == [
        "arn:aws:s3:::ckpt/a/1.pt", "arn:aws:s3:::ckpt/a/2.pt"
    ]  # fmt: skip
    assert {j["status"] for j in jobs.values()} == {"confirmed"}


def test_a_job_with_no_bill_yet_stays_estimated() -> None:
    estimates = [ResourceEstimate("a", DAY, "i-1", "instance", Decimal(5))]
    (job,) = reconcile_resources(estimates, [])["jobs"]
    assert job["status"] == "estimated"
    assert Decimal(job["difference_usd"]) == 5


def test_cur_rows_dates_and_costs() -> None:
    row = {
        "line_item_resource_id": "i-1", "line_item_usage_type": "BoxUsage:m5.large",
        "line_item_product_code": "AmazonEC2", "line_item_unblended_cost": 0.1 + 0.2,
        "line_item_usage_start_date": datetime(2026, 11, 2, 23, 0, tzinfo=UTC),
    }  # fmt: skip
    (line,) = billed_lines([row, {**row, "line_item_line_item_type": "Credit"}])
    assert line.day == DAY and line.usd == Decimal("0.30000000000000004")
    assert line.kind == "instance" and not line.final
    naive = {**row, "line_item_usage_start_date": "2026-11-02T23:00:00Z"}
    assert billed_lines([naive])[0].day == DAY


def test_bad_files_give_one_line_errors() -> None:
    with pytest.raises(DataExportError, match=r"not a CUR 2\.0 row, no line_item_resource_id"):
        billed_lines([{"identity_line_item_id": "x"}])
    with pytest.raises(DataExportError, match=r"^export\.csv: not a readable Parquet file"):
        rows_from_parquet(b"BilledCost,1\n", "export.csv")
    with pytest.raises(DataExportError, match="not a number"):
        billed_lines([{"line_item_resource_id": "i-1", "line_item_usage_type": "",
                       "line_item_product_code": "", "line_item_unblended_cost": None,
                       "line_item_usage_start_date": "2026-11-02"}])  # fmt: skip


def test_a_bad_line_is_named_by_its_file_and_row() -> None:
    row = {"line_item_resource_id": "i-1", "line_item_usage_type": "", "line_item_product_code": "",
           "line_item_unblended_cost": 1.0, "line_item_usage_start_date": "2026-11-02"}  # fmt: skip
    with pytest.raises(DataExportError, match=r"^s3://b/k\.parquet row 2: .*not a number"):
        billed_lines([row, {**row, "line_item_unblended_cost": None}], "s3://b/k.parquet")
    with pytest.raises(DataExportError, match=r"^s3://b/k\.parquet row 1: .*yesterday"):
        billed_lines([{**row, "line_item_usage_start_date": "yesterday"}], "s3://b/k.parquet")
    with pytest.raises(DataExportError, match=r"^s3://b/k\.parquet row 1: .*"):
        billed_lines([{**row, "line_item_unblended_cost": "n/a"}], "s3://b/k.parquet")
