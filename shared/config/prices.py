"""Configured prices (CDK context or a replay scenario): they win over every other source."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from decimal import Decimal

from pydantic import ConfigDict, Field, field_validator

from shared.config.base import MAX_PRICE, _Config


class SpotPricePoint(_Config):
    """One price of a spot price history: ``usd`` holds from ``from`` until the next."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, defer_build=True)

    from_: datetime = Field(alias="from")
    usd: Decimal = Field(gt=0, le=MAX_PRICE)

    @field_validator("from_")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            raise ValueError("a time with a zone, e.g. 2026-11-01T00:00:00Z")
        return value.astimezone(UTC)


class PriceOverrides(_Config):
    """Prices that win over every other source (CDK context or a replay scenario)."""

    ec2: dict[str, Decimal] = Field(default_factory=dict)
    # A spot price per type: one price, or a history (each price from its time on).
    spot: dict[str, Decimal | tuple[SpotPricePoint, ...]] = Field(default_factory=dict)
    ebs_gb_month: dict[str, Decimal] = Field(default_factory=dict)
    # Provisioned EBS performance, per volume type: $/IOPS-month and $/(MB/s)-month.
    ebs_iops_month: dict[str, Decimal] = Field(default_factory=dict)
    ebs_throughput_month: dict[str, Decimal] = Field(default_factory=dict)
    s3_gb_month: Decimal | None = Field(default=None, gt=0, le=MAX_PRICE)
    # SageMaker's own rates (ml.* types) and ML storage volumes.
    sagemaker: dict[str, Decimal] = Field(default_factory=dict)
    sagemaker_storage_gb_month: Decimal | None = Field(default=None, gt=0, le=MAX_PRICE)
    # FSx for Lustre storage $/GB-month by price key (``PERSISTENT_2_125``, ``SCRATCH_2``).
    fsx_gb_month: dict[str, Decimal] = Field(default_factory=dict)
    # When these prices were set (their "checked" date in every rate they give).
    as_of: date | None = None
    # Prices of one region, winning there over the ones above (which hold in every region):
    # {"eu-west-1": {"ec2": {"p4d.24xlarge": "..."}}}. ``for_region`` merges them.
    regions: dict[str, PriceOverrides] = Field(default_factory=dict)

    @field_validator("regions")
    @classmethod
    def _flat_regions(cls, regions: dict[str, PriceOverrides]) -> dict[str, PriceOverrides]:
        for region, prices in regions.items():
            if not re.fullmatch(r"[a-z]{2}(-[a-z]+)+-\d+", region):
                raise ValueError(f"prices.regions: {region!r} is not a region name (eu-west-1)")
            if prices.regions or prices.as_of is not None:
                raise ValueError(
                    f"prices.regions.{region}: give prices only (no regions or as_of inside)"
                )
        return regions

    def for_region(self, region: str) -> PriceOverrides:
        """The prices that hold in ``region``: its own, then those for every region."""
        own = self.regions.get(region)
        if own is None:
            return self
        merged = {
            name: {**getattr(self, name), **getattr(own, name)}
            for name in (
                "ec2",
                "spot",
                "ebs_gb_month",
                "ebs_iops_month",
                "ebs_throughput_month",
                "sagemaker",
                "fsx_gb_month",
            )
        }
        return self.model_copy(
            update={
                **merged,
                "s3_gb_month": own.s3_gb_month or self.s3_gb_month,
                "sagemaker_storage_gb_month": own.sagemaker_storage_gb_month
                or self.sagemaker_storage_gb_month,
                "regions": {},
            }
        )

    @field_validator(
        "ec2", "ebs_gb_month", "ebs_iops_month", "ebs_throughput_month", "sagemaker", "fsx_gb_month"
    )
    @classmethod
    def _positive(cls, prices: dict[str, Decimal]) -> dict[str, Decimal]:
        for key, price in prices.items():
            if not 0 < price <= MAX_PRICE:
                raise ValueError(f"price for {key!r} must be above 0 and at most {MAX_PRICE}")
        return prices

    @field_validator("spot")
    @classmethod
    def _spot(
        cls, prices: dict[str, Decimal | tuple[SpotPricePoint, ...]]
    ) -> dict[str, Decimal | tuple[SpotPricePoint, ...]]:
        for key, price in prices.items():
            if isinstance(price, Decimal) and not 0 < price <= MAX_PRICE:
                raise ValueError(f"spot price for {key!r} must be above 0 and at most {MAX_PRICE}")
            if isinstance(price, tuple) and not price:
                raise ValueError(f"spot price history for {key!r} is empty")
        return prices
