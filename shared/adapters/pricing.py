"""Where rates come from, in order: override, DynamoDB cache, live AWS, bundled snapshot.

An unknown price is never 0: every lookup returns None (or no steps), the
segment stays unpriced and is filled in when a price appears.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any, Protocol

from shared.adapters.pricing_live import LivePrices
from shared.adapters.pricing_snapshot import Snapshot, snapshot_value
from shared.adapters.pricing_spot import SeriesBook
from shared.config.ledger import LedgerConfig, PriceOverrides
from shared.domain.accrual import MONTH_CLOCK, SECONDS_CLOCK, WINDOW_CLOCK_PREFIX, basic_clock
from shared.domain.base import Rate, RateSource
from shared.domain.ebs import VolumeRates, provisioned_iops, provisioned_throughput
from shared.domain.instance import InstanceProfile
from shared.domain.lifecycle import Span
from shared.domain.price_rules import discounted, operating_system
from shared.domain.rates import RatePin

logger = logging.getLogger("costtracker.pricing")


class PriceCache(Protocol):
    def get_price(self, key: str) -> Rate | None: ...

    def put_price(self, key: str, rate: Rate) -> None: ...


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

    @property
    def today(self) -> date:
        """The check date of anything asked now."""
        return self._today

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
        return discounted(rate, self._config.discount_for(instance_type))

    # -- pins: how a span is priced ------------------------------------------------------
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
        return RatePin.for_rate(rate) if rate is not None else None

    def _spot_pin(self, profile: InstanceProfile, start: datetime) -> RatePin | None:
        override = self._prices(profile.region).spot.get(profile.instance_type)
        if isinstance(override, Decimal):
            return RatePin.for_rate(self._override(override, profile.region))
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
            lambda: snapshot_value(self._snapshot, region, "sagemaker", instance_type),
        )

    def sagemaker_storage_rate(self, region: str) -> Rate | None:
        """$/GB-month of SageMaker ML storage volumes."""
        return self._resolve(
            self._config.prices.sagemaker_storage_gb_month,
            f"sagemaker_storage#{region}",
            region,
            lambda live: None,
            lambda: snapshot_value(self._snapshot, region, "sagemaker_storage_gb_month", None),
        )

    def fsx_rate(self, region: str, key: str) -> Rate | None:
        """$/GB-month of FSx for Lustre storage by price key (``PERSISTENT_2_125``): an
        override, a cached price, else the snapshot's FSx section (its own source and
        date, per region); no Price List lookup (its FSx attribute names are not confirmed
        from a real record, docs/fsx.md). None: unpriced, never 0."""
        override = self._prices(region).fsx_gb_month.get(key)
        if override is not None:
            return self._override(override, region)
        cached = self._cache.get_price(f"fsx#{region}#{key}")
        if cached is not None:
            return cached
        usd = snapshot_value(self._snapshot, region, "fsx_gb_month", key)
        if usd is None:
            return None
        source, checked_on = self._snapshot.provenance("fsx_gb_month", region)
        return self._rate(usd, RateSource.SNAPSHOT, region, checked_on, source)

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
