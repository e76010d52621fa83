"""Price sources with recorded real AWS responses (botocore Stubber, no network)."""

import json
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import boto3
from botocore.stub import ANY, Stubber

from shared.adapters.pricing import PriceBook
from shared.adapters.pricing_live import AwsLivePrices, on_demand_usd_from_price_list
from shared.adapters.pricing_snapshot import Snapshot, bundled_snapshot
from shared.config.ledger import LedgerConfig, PriceOverrides
from shared.domain.base import RateSource
from shared.domain.instance import InstanceProfile
from shared.domain.lifecycle import Span
from shared.domain.rates import SpotSeries
from tests.support import cached_price_keys, memory_price_cache

EVENTS = Path(__file__).parent.parent / "events"
TODAY = date(2026, 11, 1)


def test_price_list_product_gives_its_on_demand_hourly_price() -> None:
    product = json.loads((EVENTS / "pricelist-c5xlarge-abridged.json").read_text())
    # The on-demand term, not the reserved one beside it.
    assert on_demand_usd_from_price_list(product, "Hrs") == Decimal("0.17")


def _stubbed_live() -> tuple[AwsLivePrices, Stubber, Stubber]:
    pricing = boto3.client(
        "pricing", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    ec2 = boto3.client(
        "ec2", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    return AwsLivePrices(pricing, ec2), Stubber(pricing), Stubber(ec2)


def test_recorded_get_products_response_parses_the_ebs_price() -> None:
    sample = json.loads((EVENTS / "pricing-get-products.json").read_text())
    live, pricing_stub, _ = _stubbed_live()
    pricing_stub.add_response(
        "get_products",
        sample["response_raw"],
        {
            "ServiceCode": "AmazonEC2",
            "Filters": ANY,
            "FormatVersion": "aws_v1",
            "MaxResults": 10,
        },
    )
    with pricing_stub:
        assert live.ebs_usd("ca-central-1", "io1") == Decimal("0.138")


def test_live_price_is_cached_with_region_source_and_check_date() -> None:
    product = (EVENTS / "pricelist-c5xlarge-abridged.json").read_text()
    live, pricing_stub, _ = _stubbed_live()
    pricing_stub.add_response("get_products", {"PriceList": [product], "FormatVersion": "aws_v1"})
    cache = memory_price_cache()
    book = PriceBook(LedgerConfig(), cache, live, bundled_snapshot(), TODAY)
    with pricing_stub:
        rate = book.on_demand("us-east-1", "c5.xlarge", "Linux/UNIX")
        again = book.on_demand("us-east-1", "c5.xlarge", "Linux/UNIX")  # from the cache
    assert rate == again
    assert rate is not None
    assert (rate.list_usd, rate.source.value, rate.checked_on, rate.region) == (
        Decimal("0.17"),
        "price_api",
        TODAY,
        "us-east-1",
    )
    assert cached_price_keys(cache) == ["ec2#us-east-1#c5.xlarge#Linux"]


def test_override_wins_and_unknown_is_none_never_zero() -> None:
    config = LedgerConfig(live_prices=False, prices=PriceOverrides(ec2={"p5.48xlarge": "50"}))
    book = PriceBook(config, memory_price_cache(), None, bundled_snapshot(), TODAY)
    rate = book.on_demand("us-east-1", "p5.48xlarge", "Linux/UNIX")
    assert rate is not None and rate.list_usd == 50 and rate.source.value == "override"
    assert book.on_demand("us-east-1", "trn2.48xlarge", "Linux/UNIX") is None
    assert book.on_demand("eu-west-1", "p5.48xlarge", "Linux/UNIX") is not None  # override
    assert book.on_demand("eu-west-1", "trn1.32xlarge", "Linux/UNIX") is None  # no snapshot
    # The snapshot is a Linux price list: another OS is unknown, not the Linux price.
    assert book.on_demand("us-east-1", "trn1.32xlarge", "Windows") is None


def test_snapshot_is_labelled_with_source_and_date() -> None:
    snap = bundled_snapshot()
    assert isinstance(snap, Snapshot) and "snapshot" in snap.source.lower()
    assert snap.ec2("us-east-1", "trn1.32xlarge") == Decimal("21.50")


def test_spot_history_gives_a_series_pinned_at_the_span_start() -> None:
    sample = json.loads((EVENTS / "ec2-describe-spot-price-history.json").read_text())
    live, _, ec2_stub = _stubbed_live()
    response = sample["response"]
    for entry in response["SpotPriceHistory"]:  # boto3 parses timestamps; the Stubber does not
        entry["Timestamp"] = datetime.fromisoformat(entry["Timestamp"].replace("Z", "+00:00"))
    ec2_stub.add_response("describe_spot_price_history", response)
    profile = InstanceProfile(
        instance_id="i-1",
        instance_type="m1.xlarge",
        region="us-west-1",
        availability_zone="us-west-1a",
        lifecycle="spot",
    )
    book = PriceBook(LedgerConfig(), memory_price_cache(), live, bundled_snapshot(), TODAY)
    start = datetime(2014, 1, 6, 7, 8, 9, tzinfo=UTC)
    end = datetime(2014, 1, 6, 8, 9, 10, tzinfo=UTC)
    with ec2_stub:
        pin = book.pin_for(profile, Span(start=start, end=None, start_event_id="r"))
    assert pin is not None and pin.rate is None and pin.series is not None
    assert (pin.source.value, pin.region) == ("spot_history", "us-west-1")
    assert pin.series_start == book.series.integral(pin.series, start)
    assert book.series.rate_at(pin.series, start) == Decimal("0.08")
    # The series is a clock: 3,661 s at $0.08/h
    clock = f"spot:{pin.series}"
    spent = (book.clock(clock, end) - book.clock(clock, start)) / 3600
    assert spent == Decimal("0.08") * 3661 / 3600
    ec2_stub.assert_no_pending_responses()


def test_spot_history_is_asked_once_per_market() -> None:
    live, _, ec2_stub = _stubbed_live()
    ec2_stub.add_response(
        "describe_spot_price_history",
        {
            "SpotPriceHistory": [
                {
                    "AvailabilityZone": "us-east-1a",
                    "InstanceType": "p5.48xlarge",
                    "ProductDescription": "Linux/UNIX",
                    "SpotPrice": "20.0",
                    "Timestamp": datetime(2026, 10, 30, tzinfo=UTC),
                }
            ]
        },
    )
    profile = InstanceProfile(
        instance_id="i-1",
        instance_type="p5.48xlarge",
        region="us-east-1",
        availability_zone="us-east-1a",
        lifecycle="spot",
    )
    book = PriceBook(LedgerConfig(), memory_price_cache(), live, bundled_snapshot(), TODAY)
    with ec2_stub:  # a second call would find no stubbed response and fail
        for hour in range(3):
            start = datetime(2026, 11, 1, hour, tzinfo=UTC)
            running = Span(start=start, end=None, start_event_id="r")
            assert book.pin_for(profile, running) is not None


def test_a_failing_spot_history_leaves_the_span_unpriced_never_zero() -> None:
    live, _, ec2_stub = _stubbed_live()
    ec2_stub.add_client_error("describe_spot_price_history", "RequestLimitExceeded")
    profile = InstanceProfile(
        instance_id="i-1",
        instance_type="p5.48xlarge",
        region="us-east-1",
        availability_zone="us-east-1a",
        lifecycle="spot",
    )
    book = PriceBook(LedgerConfig(), memory_price_cache(), live, bundled_snapshot(), TODAY)
    with ec2_stub:
        start = datetime(2026, 11, 1, tzinfo=UTC)
        assert book.pin_for(profile, Span(start=start, end=None, start_event_id="r")) is None


def test_spot_price_unknown_at_the_start_gives_no_pin() -> None:
    later = datetime(2026, 11, 1, 12, tzinfo=UTC)
    series = SpotSeries.build(
        "s", [(later, Decimal("1"))], RateSource.OVERRIDE, "2026-11-01", "us-east-1"
    )
    assert not series.covers(datetime(2026, 11, 1, tzinfo=UTC)) and series.covers(later)
    config = LedgerConfig(
        live_prices=False,
        prices=PriceOverrides.model_validate(
            {"spot": {"p5.48xlarge": [{"from": later.isoformat(), "usd": "1"}]}}
        ),
    )
    book = PriceBook(config, memory_price_cache(), None, bundled_snapshot(), TODAY)
    profile = InstanceProfile(
        instance_id="i-1", instance_type="p5.48xlarge", region="us-east-1", lifecycle="spot"
    )
    early = Span(start=datetime(2026, 11, 1, tzinfo=UTC), end=None, start_event_id="r")
    assert book.pin_for(profile, early) is None
    pin = book.pin_for(profile, early.model_copy(update={"start": later}))
    assert pin is not None and pin.series == "override:p5.48xlarge"
    assert pin.source.value == "override"


def test_a_constant_spot_override_is_a_plain_rate() -> None:
    config = LedgerConfig(
        live_prices=False, prices=PriceOverrides(spot={"p5.48xlarge": Decimal("20")})
    )
    book = PriceBook(config, memory_price_cache(), None, bundled_snapshot(), TODAY)
    profile = InstanceProfile(
        instance_id="i-1", instance_type="p5.48xlarge", region="us-east-1", lifecycle="spot"
    )
    pin = book.pin_for(
        profile, Span(start=datetime(2026, 11, 1, tzinfo=UTC), end=None, start_event_id="r")
    )
    assert pin is not None and pin.rate is not None and pin.rate.list_usd == 20
    assert pin.series is None


def test_a_failing_price_list_falls_back_to_the_snapshot_or_unpriced() -> None:
    live, pricing_stub, _ = _stubbed_live()
    pricing_stub.add_client_error("get_products", "ThrottlingException")
    pricing_stub.add_client_error("get_products", "ThrottlingException")
    book = PriceBook(LedgerConfig(), memory_price_cache(), live, bundled_snapshot(), TODAY)
    with pricing_stub:
        rate = book.on_demand("us-east-1", "trn1.32xlarge", "Linux/UNIX")
        unknown = book.on_demand("us-east-1", "trn2.48xlarge", "Linux/UNIX")
    assert rate is not None and rate.source.value == "snapshot"
    assert rate.list_usd == Decimal("21.50")
    assert unknown is None
