"""Prices asked of AWS: the Price List API and EC2 spot price history (``LivePrices``,
and its boto3 implementation)."""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal
from typing import Any, Protocol

from shared.domain.price_rules import region_of_zone


class LivePrices(Protocol):
    """Prices asked of AWS: the Price List API and spot price history."""

    def on_demand_usd(
        self, region: str, instance_type: str, operating_system: str
    ) -> Decimal | None: ...

    def ebs_usd(self, region: str, volume_type: str) -> Decimal | None: ...

    def s3_usd(self, region: str) -> Decimal | None: ...

    def spot_history(
        self,
        availability_zone: str,
        instance_type: str,
        product: str,
        start: datetime,
        end: datetime,
    ) -> list[tuple[datetime, Decimal]]: ...


class AwsLivePrices:
    """``LivePrices`` over the Price List API and EC2 spot price history. ``ec2`` is a
    client or a ``ClientFactory`` (``shared.adapters.accounts``): spot history is asked in
    the zone's own region (the tracker's account: spot prices are the same for all)."""

    def __init__(self, pricing_client: Any, ec2: Any) -> None:
        from shared.adapters.accounts import factory_of

        self._pricing = pricing_client
        self._clients = factory_of(ec2)

    def _first_usd(self, service: str, filters: dict[str, str], unit: str) -> Decimal | None:
        response = self._pricing.get_products(
            ServiceCode=service,
            Filters=[{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in filters.items()],
            FormatVersion="aws_v1",
            MaxResults=10,
        )
        for entry in response.get("PriceList", []):
            usd = on_demand_usd_from_price_list(entry, unit)
            if usd is not None:
                return usd
        return None

    def on_demand_usd(
        self, region: str, instance_type: str, operating_system: str
    ) -> Decimal | None:
        return self._first_usd(
            "AmazonEC2",
            {
                "instanceType": instance_type,
                "regionCode": region,
                "operatingSystem": operating_system,
                "tenancy": "Shared",
                "preInstalledSw": "NA",
                "capacitystatus": "Used",
                "licenseModel": "No License required",
            },
            "Hrs",
        )

    def ebs_usd(self, region: str, volume_type: str) -> Decimal | None:
        return self._first_usd(
            "AmazonEC2",
            {"productFamily": "Storage", "volumeApiName": volume_type, "regionCode": region},
            "GB-Mo",
        )

    def s3_usd(self, region: str) -> Decimal | None:
        return self._first_usd(
            "AmazonS3",
            {
                "regionCode": region,
                "productFamily": "Storage",
                "storageClass": "General Purpose",
                "volumeType": "Standard",
            },
            "GB-Mo",
        )

    def spot_history(
        self,
        availability_zone: str,
        instance_type: str,
        product: str,
        start: datetime,
        end: datetime,
    ) -> list[tuple[datetime, Decimal]]:
        ec2 = self._clients.client_for("ec2", "", region_of_zone(availability_zone))
        paginator = ec2.get_paginator("describe_spot_price_history")
        entries: list[tuple[datetime, Decimal]] = []
        for page in paginator.paginate(
            InstanceTypes=[instance_type],
            ProductDescriptions=[product],
            AvailabilityZone=availability_zone,
            StartTime=start,
            EndTime=end,
        ):
            for item in page.get("SpotPriceHistory", []):
                entries.append((item["Timestamp"], Decimal(item["SpotPrice"])))
        return entries


def on_demand_usd_from_price_list(entry: str | dict[str, Any], unit: str) -> Decimal | None:
    """The on-demand USD price of one Price List product (a JSON string in GetProducts)."""
    product = json.loads(entry) if isinstance(entry, str) else entry
    for term in product.get("terms", {}).get("OnDemand", {}).values():
        for dimension in term.get("priceDimensions", {}).values():
            if dimension.get("unit") != unit or dimension.get("beginRange", "0") != "0":
                continue
            usd = Decimal(dimension.get("pricePerUnit", {}).get("USD", "0"))
            if usd > 0:
                return usd
    return None
