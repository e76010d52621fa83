"""Hand-made FOCUS charges of every kind the export knows, hand-priced."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from shared.reports.focus import Charge

DAY = datetime(2026, 11, 2, tzinfo=UTC)
NEXT = datetime(2026, 11, 3, tzinfo=UTC)
MONTH = Decimal(30)  # November: a day is 1/30 of a month


def charge(
    kind: str, resource_id: str, quantity: Decimal, price: Decimal, **extra: object
) -> Charge:
    cost = price * quantity
    fields: dict[str, Any] = dict(
        kind=kind, job_id="llama3-8b-lora", account="012345678901", region="us-east-1",
        resource_id=resource_id, period_start=DAY, period_end=NEXT,
        pricing_quantity=quantity, consumed_quantity=quantity, list_unit_price=price,
        contracted_unit_price=price, list_cost=cost, contracted_cost=cost, effective_cost=cost,
        description=f"Estimated by costtracker: {kind}", availability_zone="us-east-1a",
        tags={"training-job": "llama3-8b-lora"}, rate_source="snapshot",
        rate_checked_on=date(2025, 12, 1),
    )  # fmt: skip
    fields.update(extra)
    return Charge(**fields)


def every_kind() -> list[Charge]:
    return [
        charge("instance", "i-0a1a1a1a1a1a1a1a1", Decimal(24), Decimal("21.50"),
               sku_id="BoxUsage:trn1.32xlarge", resource_name="trainer-0"),
        charge("instance", "i-0c3c3c3c3c3c3c3c3", Decimal(3), Decimal("12.5"),
               pricing_category="Dynamic", sku_id="SpotUsage:p5.48xlarge",
               consumed_quantity=Decimal("2.99")),
        charge("capacity_reservation", "cr-0123456789abcdef0", Decimal(24), Decimal("21.50"),
               capacity_reservation_id="cr-0123456789abcdef0",
               capacity_reservation_status="Unused"),
        charge("ebs_volume", "vol-0123456789abcdef0", Decimal(1024) / MONTH, Decimal("0.08")),
        charge("ebs_iops", "vol-0123456789abcdef0", Decimal(6000) / MONTH, Decimal("0.005")),
        charge("ebs_throughput", "vol-0123456789abcdef0", Decimal(375) / MONTH, Decimal("0.04")),
        charge("checkpoint_storage", "arn:aws:s3:::ckpt/llama/step-100.pt",
               Decimal(80) / MONTH, Decimal("0.023"), availability_zone=None, tags={},
               resource_name="llama/step-100.pt"),
        charge("sagemaker_training",
               "arn:aws:sagemaker:us-east-1:012345678901:training-job/llama-sft-a",
               Decimal(2), Decimal("24.72"), availability_zone=None,
               resource_name="llama-sft-a"),
        charge("sagemaker_warm_pool",
               "arn:aws:sagemaker:us-east-1:012345678901:training-job/llama-sft-a",
               Decimal(1), Decimal("24.72"), availability_zone=None,
               resource_name="llama-sft-a"),
        charge("sagemaker_storage",
               "arn:aws:sagemaker:us-east-1:012345678901:training-job/llama-sft-a",
               Decimal(1200) / MONTH / 8, Decimal("0.14"), availability_zone=None,
               resource_name="llama-sft-a"),
        charge("fsx_storage",
               "arn:aws:fsx:us-east-1:012345678901:file-system/fs-0123456789abcdef0",
               Decimal(1200) / MONTH, Decimal("0.145"), availability_zone=None,
               resource_name="fs-0123456789abcdef0", sku_id="FSx:Lustre:PERSISTENT_2_125"),
    ]  # fmt: skip
