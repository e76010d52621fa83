"""Spot price series: configured histories (``prices.spot`` as a list) and live ones (EC2
spot price history, fetched once per market and run)."""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from shared.adapters.pricing_live import LivePrices
from shared.config.ledger import LedgerConfig, SpotPricePoint
from shared.domain.base import RateSource
from shared.domain.instance import InstanceProfile
from shared.domain.price_rules import spot_product
from shared.domain.rates import SpotSeries

logger = logging.getLogger("costtracker.pricing")


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
        product = spot_product(profile.platform)
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
