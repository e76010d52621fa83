"""Each event prices with its own region's rates: configured per region, cached per region,
the snapshot per region; a region nobody prices is unpriced (never 0, never us-east-1)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import pytest
from pydantic import ValidationError

from shared.adapters.pricing import PriceBook
from shared.adapters.pricing_live import AwsLivePrices
from shared.adapters.pricing_snapshot import bundled_snapshot
from shared.config.ledger import LedgerConfig, PriceOverrides
from shared.domain.base import Rate, RateSource
from shared.domain.instance import InstanceProfile
from shared.domain.lifecycle import Span
from shared.domain.price_rules import region_of_zone
from tests.support import cached_price_keys, memory_price_cache

TODAY = date(2026, 11, 1)
REGIONAL = {
    "ec2": {"p4d.24xlarge": "30"},
    "regions": {
        "eu-west-1": {
            "ec2": {"p4d.24xlarge": "24.16", "trn1.32xlarge": "23.65"},
            "s3_gb_month": "0.024",
        }
    },
}


def book(prices: dict[str, Any] | None = None, live: Any = None) -> PriceBook:
    config = LedgerConfig(
        live_prices=live is not None, prices=PriceOverrides.model_validate(prices or {})
    )
    return PriceBook(config, memory_price_cache(), live, bundled_snapshot(), TODAY)


def test_a_regions_own_price_wins_there_and_only_there() -> None:
    prices = book(REGIONAL)
    eu = prices.on_demand("eu-west-1", "p4d.24xlarge", "Linux/UNIX")
    us = prices.on_demand("us-east-1", "p4d.24xlarge", "Linux/UNIX")
    assert eu is not None and us is not None
    assert (eu.list_usd, eu.region, eu.source) == (
        Decimal("24.16"),
        "eu-west-1",
        RateSource.OVERRIDE,
    )
    assert (us.list_usd, us.region) == (Decimal("30"), "us-east-1")  # the global override
    trn_us = prices.on_demand("us-east-1", "trn1.32xlarge", "Linux/UNIX")
    assert trn_us is not None and trn_us.source == RateSource.SNAPSHOT
    assert trn_us.list_usd == Decimal("21.50")
    s3_eu, s3_us = prices.s3_rate("eu-west-1"), prices.s3_rate("us-east-1")
    assert s3_eu is not None and s3_eu.list_usd == Decimal("0.024")
    assert s3_us is not None and s3_us.list_usd == Decimal("0.023")  # the snapshot's


def test_a_region_nobody_prices_is_unknown_not_us_east_1() -> None:
    prices = book(REGIONAL)
    # us-east-1 has a snapshot price for trn1.32xlarge; ap-southeast-2 has none.
    assert prices.on_demand("ap-southeast-2", "trn1.32xlarge", "Linux/UNIX") is None
    assert prices.volume_rate("ap-southeast-2", "gp3") is None
    assert prices.s3_rate("ap-southeast-2") is None


def test_cached_prices_are_per_region() -> None:
    cache = memory_price_cache()
    cache.put_price(
        "ec2#us-east-1#p5.48xlarge#Linux",
        Rate(
            list_usd=Decimal("55.04"),
            effective_usd=Decimal("55.04"),
            source=RateSource.PRICE_API,
            checked_on=TODAY,
            region="us-east-1",
        ),
    )

    class Live:
        asked: list[str] = []

        def on_demand_usd(self, region: str, instance_type: str, os_name: str) -> Decimal | None:
            self.asked.append(region)
            return Decimal("61.2") if region == "eu-west-1" else None

    live = Live()
    prices = PriceBook(LedgerConfig(), cache, live, bundled_snapshot(), TODAY)  # type: ignore[arg-type]
    eu = prices.on_demand("eu-west-1", "p5.48xlarge", "Linux/UNIX")
    us = prices.on_demand("us-east-1", "p5.48xlarge", "Linux/UNIX")
    assert eu is not None and (eu.list_usd, eu.region) == (Decimal("61.2"), "eu-west-1")
    assert us is not None and us.list_usd == Decimal("55.04")
    assert live.asked == ["eu-west-1"]  # us-east-1 came from its cache
    assert "ec2#eu-west-1#p5.48xlarge#Linux" in cached_price_keys(cache)


def test_regional_spot_history_is_its_own_series() -> None:
    at = datetime(2026, 11, 1, tzinfo=UTC)
    prices = book(
        {
            "spot": {"p5.48xlarge": [{"from": "2026-11-01T00:00:00Z", "usd": "20"}]},
            "regions": {
                "eu-west-1": {
                    "spot": {"p5.48xlarge": [{"from": "2026-11-01T00:00:00Z", "usd": "25"}]}
                }
            },
        }
    )

    def profile(region: str) -> InstanceProfile:
        return InstanceProfile(
            instance_id="i-0123456789abcdef0",
            instance_type="p5.48xlarge",
            region=region,
            lifecycle="spot",
        )

    eu = prices.pin_for(profile("eu-west-1"), Span(start=at, end=None, start_event_id="e1"))
    us = prices.pin_for(profile("us-east-1"), Span(start=at, end=None, start_event_id="e1"))
    assert eu is not None and us is not None
    assert eu.series == "override:p5.48xlarge@eu-west-1" and us.series == "override:p5.48xlarge"
    assert prices.series.rate_at(eu.series, at) == Decimal("25")
    assert prices.series.rate_at(us.series, at) == Decimal("20")


def test_spot_history_is_asked_in_the_zones_region() -> None:
    asked: list[tuple[str, str, str]] = []

    class Paginator:
        def paginate(self, **_: Any) -> list[dict[str, Any]]:
            return [{"SpotPriceHistory": []}]

    class Ec2:
        def get_paginator(self, name: str) -> Paginator:
            return Paginator()

    class Factory:
        def client_for(self, service: str, account: str = "", region: str = "") -> Any:
            asked.append((service, account, region))
            return Ec2()

    live = AwsLivePrices(object(), Factory())
    at = datetime(2026, 11, 1, tzinfo=UTC)
    live.spot_history("eu-west-1b", "p5.48xlarge", "Linux/UNIX", at, at)
    assert asked == [("ec2", "", "eu-west-1")]
    assert region_of_zone("us-west-2-lax-1a") == "us-west-2"


@pytest.mark.parametrize(
    "bad",
    [
        {"regions": {"Europe": {"ec2": {"p5.48xlarge": "1"}}}},
        {"regions": {"eu-west-1": {"regions": {"eu-west-2": {}}}}},
        {"regions": {"eu-west-1": {"ec2": {"p5.48xlarge": "0"}}}},
    ],
)
def test_bad_regional_prices_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        PriceOverrides.model_validate(bad)
