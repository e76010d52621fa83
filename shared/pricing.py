"""Where rates come from, in order: override, DynamoDB cache, live AWS, bundled snapshot.

An unknown price is never 0: every lookup returns None (or no steps), the
segment stays unpriced and is filled in when a price appears.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from functools import cache
from importlib import resources
from typing import Any, Protocol

from shared.config import LedgerConfig, PriceOverrides, SpotPricePoint
from shared.domain.accrual import MONTH_CLOCK, SECONDS_CLOCK, WINDOW_CLOCK_PREFIX, basic_clock
from shared.domain.base import Rate, RateSource
from shared.domain.instance import (
    InstanceProfile,
    VolumeRates,
    provisioned_iops,
    provisioned_throughput,
)
from shared.domain.lifecycle import Span
from shared.domain.rates import RatePin, SpotSeries

logger = logging.getLogger("costtracker.pricing")

# PlatformDetails (DescribeInstances) -> Price List "operatingSystem".
_OPERATING_SYSTEMS = {
    "linux/unix": "Linux",
    "red hat enterprise linux": "RHEL",
    "suse linux": "SUSE",
    "windows": "Windows",
    "ubuntu pro": "Ubuntu Pro",
}
# PlatformDetails -> spot ProductDescription.
_SPOT_PRODUCTS = {
    "linux/unix": "Linux/UNIX",
    "red hat enterprise linux": "Red Hat Enterprise Linux",
    "suse linux": "SUSE Linux",
    "windows": "Windows",
}


class PriceCache(Protocol):
    def get_price(self, key: str) -> Rate | None: ...

    def put_price(self, key: str, rate: Rate) -> None: ...


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


class Snapshot:
    """The bundled, labelled price list for offline runs."""

    def __init__(self, document: dict[str, Any]) -> None:
        self._doc = document
        self.source: str = document["source"]
        self.checked_on = date.fromisoformat(document["checked_on"])

    def _region(self, region: str) -> dict[str, Any]:
        regions: dict[str, Any] = self._doc["regions"]
        return regions.get(region, {})

    def ec2(self, region: str, instance_type: str) -> Decimal | None:
        value = self._region(region).get("ec2", {}).get(instance_type)
        return Decimal(value) if value else None

    def ebs(self, region: str, volume_type: str) -> Decimal | None:
        value = self._region(region).get("ebs_gb_month", {}).get(volume_type)
        return Decimal(value) if value else None

    def s3(self, region: str) -> Decimal | None:
        value = self._region(region).get("s3_gb_month")
        return Decimal(value) if value else None


@cache
def bundled_snapshot() -> Snapshot:
    text = resources.files("shared").joinpath("data/price_snapshot.json").read_text()
    return Snapshot(json.loads(text))


def operating_system(platform: str) -> str:
    return _OPERATING_SYSTEMS.get(platform.lower(), platform)


class PriceBook:
    """Resolves rates with provenance; ``today`` is the check date of anything asked now."""

    def __init__(
        self,
        config: LedgerConfig,
        cache_store: PriceCache,
        live: LivePrices | None,
        snapshot: Snapshot,
        today: date,
    ) -> None:
        self._config = config
        self._cache = cache_store
        self._live = live if config.live_prices else None
        self._snapshot = snapshot
        self._today = today
        self._series: SeriesBook | None = None

    def _rate(
        self, list_usd: Decimal, source: RateSource, region: str, checked_on: date, note: str = ""
    ) -> Rate:
        return Rate(
            list_usd=list_usd,
            effective_usd=list_usd,
            source=source,
            checked_on=checked_on,
            region=region,
            note=note,
        )

    def _cached_or_live(self, key: str, region: str, ask: Any) -> Rate | None:
        cached = self._cache.get_price(key)
        fresh_after = self._today - timedelta(days=self._config.price_max_age_days)
        if cached is not None and cached.checked_on >= fresh_after:
            return cached
        if self._live is not None:
            try:
                usd = ask()
            except Exception as exc:  # throttled, denied, down: the snapshot or unpriced
                logger.warning("live price source failed", extra={"key": key, "error": str(exc)})
                usd = None
            if usd is not None and usd > 0:
                rate = self._rate(usd, RateSource.PRICE_API, region, self._today)
                self._cache.put_price(key, rate)
                return rate
        return cached  # a stale cached price beats none; its check date says how old

    def _prices(self, region: str) -> PriceOverrides:
        """The configured prices that hold in ``region`` (its own win over the global)."""
        return self._config.prices.for_region(region)

    def _override(self, usd: Decimal, region: str) -> Rate:
        as_of = self._config.prices.as_of or self._today
        return self._rate(usd, RateSource.OVERRIDE, region, as_of, "configured price")

    def _resolve(
        self,
        override: Decimal | None,
        cache_key: str,
        region: str,
        ask: Callable[[LivePrices], Decimal | None],
        snapshot_usd: Callable[[], Decimal | None],
    ) -> Rate | None:
        """The order every rate follows: override, fresh cache or live, then the snapshot."""
        if override is not None:
            return self._override(override, region)
        live = self._live
        rate = self._cached_or_live(cache_key, region, lambda: ask(live) if live else None)
        if rate is None:
            usd = snapshot_usd()
            if usd is not None:
                rate = self._rate(
                    usd,
                    RateSource.SNAPSHOT,
                    region,
                    self._snapshot.checked_on,
                    self._snapshot.source,
                )
        return rate

    def on_demand(self, region: str, instance_type: str, platform: str) -> Rate | None:
        """The on-demand list rate and the effective (discounted) rate beside it. The
        snapshot is a Linux price list: another OS without a live price is unknown."""
        os_name = operating_system(platform)
        rate = self._resolve(
            self._prices(region).ec2.get(instance_type),
            f"ec2#{region}#{instance_type}#{os_name}",
            region,
            lambda live: live.on_demand_usd(region, instance_type, os_name),
            lambda: self._snapshot.ec2(region, instance_type) if os_name == "Linux" else None,
        )
        if rate is None:
            return None
        discount = self._config.discount_for(instance_type)
        if discount:
            effective = rate.list_usd * (Decimal(1) - discount)
            rate = rate.model_copy(update={"effective_usd": effective})
        return rate

    # -- pins: how a span is priced ------------------------------------------------------
    def _pin(self, rate: Rate) -> RatePin:
        return RatePin(
            rate=rate,
            source=rate.source,
            checked_on=rate.checked_on.isoformat(),
            region=rate.region,
            note=rate.note,
        )

    # How an instance in a Capacity Block is priced (its share of the block's fee); set by
    # the runtime. Without it such an instance is unpriced, never at the on-demand rate.
    block_pin: Callable[[InstanceProfile, Span], RatePin | None] | None = None

    def pin_for(self, profile: InstanceProfile, span: Span) -> RatePin | None:
        """The rate a span is billed at, fixed when it opens; None when no source knows it."""
        if profile.lifecycle == "capacity-block":
            return self.block_pin(profile, span) if self.block_pin is not None else None
        if profile.lifecycle == "spot":
            return self._spot_pin(profile, span.start)
        rate = self.on_demand(profile.region, profile.instance_type, profile.platform)
        return self._pin(rate) if rate is not None else None

    def _spot_pin(self, profile: InstanceProfile, start: datetime) -> RatePin | None:
        override = self._prices(profile.region).spot.get(profile.instance_type)
        if isinstance(override, Decimal):
            return self._pin(self._override(override, profile.region))
        series_id = self.series.series_for(profile)
        if series_id is None or not self.series.covers(series_id, start):
            return None
        found = self.series.get(series_id)
        return RatePin(
            series=series_id,
            series_start=self.series.integral(series_id, start),
            source=found.source,
            checked_on=found.checked_on,
            region=profile.region,
        )

    @property
    def series(self) -> SeriesBook:
        if self._series is None:
            self._series = SeriesBook(self._config, self._live, self._today)
        return self._series

    def clock(self, clock: str, at: datetime) -> Decimal:
        """The value of an accrual clock at ``at`` (spot clocks read their series)."""
        if clock in (SECONDS_CLOCK, MONTH_CLOCK) or clock.startswith(WINDOW_CLOCK_PREFIX):
            return basic_clock(clock, at)
        return self.series.integral(clock.removeprefix("spot:"), at)

    def volume_rates(self, profile: InstanceProfile) -> tuple[VolumeRates, ...]:
        out = []
        for volume in profile.volumes:
            iops = provisioned_iops(volume)
            out.append(
                VolumeRates(
                    volume_id=volume.volume_id,
                    size=self.volume_rate(profile.region, volume.volume_type),
                    iops=self._perf_rate(profile.region, volume.volume_type, "iops")
                    if iops
                    else None,
                    throughput=self._perf_rate(profile.region, volume.volume_type, "throughput")
                    if provisioned_throughput(volume)
                    else None,
                )
            )
        return tuple(out)

    def _perf_rate(self, region: str, volume_type: str, what: str) -> Rate | None:
        """$/IOPS-month or $/(MB/s)-month of provisioned performance (configured or cached;
        the bundled snapshot does not carry them)."""
        prices = self._prices(region)
        override = (prices.ebs_iops_month if what == "iops" else prices.ebs_throughput_month).get(
            volume_type
        )
        return self._resolve(
            override,
            f"ebs_{what}#{region}#{volume_type}",
            region,
            lambda live: None,
            lambda: None,
        )

    def sagemaker_rate(self, region: str, instance_type: str) -> Rate | None:
        """SageMaker's own hourly rate of an ``ml.*`` instance type (training)."""
        return self._resolve(
            self._config.prices.sagemaker.get(instance_type),
            f"sagemaker#{region}#{instance_type}",
            region,
            lambda live: None,
            lambda: _snapshot_value(self._snapshot, region, "sagemaker", instance_type),
        )

    def sagemaker_storage_rate(self, region: str) -> Rate | None:
        """$/GB-month of SageMaker ML storage volumes."""
        return self._resolve(
            self._config.prices.sagemaker_storage_gb_month,
            f"sagemaker_storage#{region}",
            region,
            lambda live: None,
            lambda: _snapshot_value(self._snapshot, region, "sagemaker_storage_gb_month", None),
        )

    def s3_rate(self, region: str) -> Rate | None:
        """$/GB-month of S3 Standard (first tier), for checkpoint storage."""
        return self._resolve(
            self._prices(region).s3_gb_month,
            f"s3#{region}#standard",
            region,
            lambda live: live.s3_usd(region),
            lambda: self._snapshot.s3(region),
        )

    def volume_rate(self, region: str, volume_type: str) -> Rate | None:
        """$/GB-month of an EBS volume type."""
        return self._resolve(
            self._prices(region).ebs_gb_month.get(volume_type),
            f"ebs#{region}#{volume_type}",
            region,
            lambda live: live.ebs_usd(region, volume_type),
            lambda: self._snapshot.ebs(region, volume_type),
        )


def _snapshot_value(
    snapshot: Snapshot, region: str, section: str, key: str | None
) -> Decimal | None:
    """A value of the snapshot's region (a section's key, or the section itself)."""
    value = snapshot._region(region).get(section)
    if key is not None:
        value = value.get(key) if isinstance(value, dict) else None
    return Decimal(str(value)) if value else None


class SeriesBook:
    """Spot price series: configured histories (``prices.spot`` as a list) and live ones
    (EC2 spot price history, fetched once per market and run)."""

    def __init__(self, config: LedgerConfig, live: LivePrices | None, today: date) -> None:
        self._config = config
        self._live = live
        self._today = today
        self._series: dict[str, SpotSeries] = {}

    def series_for(self, profile: InstanceProfile) -> str | None:
        regional = self._config.prices.regions.get(profile.region)
        if regional is not None and isinstance(regional.spot.get(profile.instance_type), tuple):
            return f"override:{profile.instance_type}@{profile.region}"
        override = self._config.prices.spot.get(profile.instance_type)
        if isinstance(override, tuple):
            return f"override:{profile.instance_type}"
        if self._live is None or not profile.availability_zone:
            return None
        product = _SPOT_PRODUCTS.get(profile.platform.lower(), profile.platform)
        return f"live:{profile.availability_zone}:{profile.instance_type}:{product}"

    def get(self, series_id: str) -> SpotSeries:
        found = self._series.get(series_id)
        if found is None:
            found = self._load(series_id)
            self._series[series_id] = found
        return found

    def _load(self, series_id: str) -> SpotSeries:
        kind, _, rest = series_id.partition(":")
        as_of = (self._config.prices.as_of or self._today).isoformat()
        if kind == "override":
            instance_type, _, region = rest.partition("@")  # @region: that region's own
            history = self._config.prices.for_region(region).spot.get(instance_type)
            points: tuple[SpotPricePoint, ...] = history if isinstance(history, tuple) else ()
            return SpotSeries.build(
                series_id, [(p.from_, p.usd) for p in points], RateSource.OVERRIDE, as_of, ""
            )
        zone, instance_type, product = rest.split(":", 2)
        prices: list[tuple[datetime, Decimal]] = []
        if self._live is not None:
            end = datetime.combine(self._today, datetime.min.time(), tzinfo=UTC) + timedelta(days=1)
            try:
                prices = self._live.spot_history(
                    zone, instance_type, product, end - timedelta(days=90), end
                )
            except Exception as exc:
                logger.warning("spot price history failed", extra={"error": str(exc)})
        return SpotSeries.build(
            series_id,
            [(at.astimezone(UTC), usd) for at, usd in prices],
            RateSource.SPOT_HISTORY,
            self._today.isoformat(),
            zone[:-1],
        )

    def covers(self, series_id: str, at: datetime) -> bool:
        return self.get(series_id).covers(at)

    def integral(self, series_id: str, at: datetime) -> Decimal:
        return self.get(series_id).integral(at)

    def rate_at(self, series_id: str, at: datetime) -> Decimal:
        return self.get(series_id).rate_at(at)


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


_ZONE = re.compile(r"^([a-z]{2}(?:-[a-z]+)+-\d+)")


def region_of_zone(availability_zone: str) -> str:
    """``eu-west-1a`` -> ``eu-west-1``; a Local Zone ``us-west-2-lax-1a`` -> ``us-west-2``
    (its parent region); empty if it does not look like a zone."""
    match = _ZONE.match(availability_zone)
    return match.group(1) if match else ""


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
