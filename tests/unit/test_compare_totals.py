"""/compare's totals are the job view's: managed charges (ML storage, warm pools, reserved
capacity left unused) are in both the effective and the list total."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from shared.config.ledger import LedgerConfig
from shared.domain.job import JobCost
from shared.reports.compare import compare_jobs

AT = datetime(2026, 11, 2, tzinfo=UTC)


def _job(job_id: str, **managed: Decimal) -> JobCost:
    zero = Decimal(0)
    return JobCost(
        job_id=job_id,
        as_of=AT,
        tags={},
        tag_conflicts={},
        accounts=("123456789012",),
        status="stopped",
        instances=(),
        instance_usd=Decimal("80.00"),
        instance_list_usd=Decimal("100.00"),
        ebs_usd=Decimal("2.00"),
        checkpoint_storage_usd=Decimal("0.50"),
        wasted_rerun_usd=zero,
        wasted_rerun_list_usd=zero,
        wasted_idle_usd=zero,
        wasted_idle_list_usd=zero,
        burn_rate_usd_per_hour=zero,
        billed_seconds=3600,
        started_at=AT,
        unconfirmed=(),
        unpriced=(),
        price_sources=(),
        warnings=(),
        **managed,
    )


def test_list_total_includes_the_managed_charges_as_the_job_view_does() -> None:
    managed = _job("sagemaker", ml_storage_usd=Decimal("3.25"), warm_pool_usd=Decimal("4.00"),
                   wasted_reserved_usd=Decimal("10.00"))  # fmt: skip
    plain = _job("ec2")
    rows = {r["job_id"]: r for r in compare_jobs([managed, plain], LedgerConfig())["jobs"]}
    figures = {
        (job, name): Decimal(row[name])
        for job, row in rows.items()
        for name in ("total_usd", "list_total_usd")
    }
    assert figures == {
        ("sagemaker", "total_usd"): Decimal("99.75"),  # 80 + 2 + 0.50 + 17.25
        ("sagemaker", "list_total_usd"): Decimal("119.75"),  # 100 + 2 + 0.50 + 17.25
        ("ec2", "total_usd"): Decimal("82.50"),
        ("ec2", "list_total_usd"): Decimal("102.50"),
    }
