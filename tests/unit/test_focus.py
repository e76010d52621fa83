"""The FOCUS export's own checks of FOCUS 1.2 rules, its charges, and its two files."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from shared.adapters.pricing import PriceBook
from shared.adapters.pricing_snapshot import bundled_snapshot
from shared.config.ledger import LedgerConfig, PriceOverrides, SpotPricePoint
from shared.domain.base import Rate
from shared.domain.checkpoint import GIB
from shared.domain.day_split import instance_between, job_between
from shared.domain.ebs import Volume
from shared.domain.instance import InstanceProfile
from shared.reports.csv_safe import neutralise
from shared.reports.focus import (
    COLUMN_NAMES,
    KINDS,
    MANDATORY,
    focus_files,
    focus_row,
    to_csv,
    to_parquet,
)
from shared.reports.focus_charges import job_charges
from shared.reports.focus_checks import check_rows
from tests.support import REGION, Ledger, Timeline, job_records, memory_ledger
from tests.unit.focus_samples import DAY, NEXT, every_kind


def rows() -> list[dict[str, Any]]:
    return [focus_row(c) for c in every_kind()]


def test_every_kind_of_charge_meets_the_rules() -> None:
    sample = rows()
    assert {r["x_ChargeKind"] for r in sample} == set(KINDS)
    assert check_rows(sample) == []
    for row in sample:
        assert list(row) == list(COLUMN_NAMES)
        assert row["ProviderName"] == row["InvoiceIssuerName"] == row["PublisherName"]
        assert row["InvoiceId"] is None and row["ChargeClass"] is None


def test_one_service_category_and_subcategory_per_service_name() -> None:
    by_service: dict[str, set[tuple[str, str]]] = {}
    for info in KINDS.values():
        by_service.setdefault(info.service_name, set()).add(
            (info.service_category, info.service_subcategory)
        )
    assert all(len(v) == 1 for v in by_service.values()), by_service


def test_parquet_read_back_has_focus_types_and_real_nulls() -> None:
    table = pq.read_table(io.BytesIO(to_parquet(rows())))
    schema = table.schema
    assert schema.names == list(COLUMN_NAMES)
    for name in ("BilledCost", "EffectiveCost", "ListCost", "ContractedCost", "ListUnitPrice"):
        assert schema.field(name).type == pa.decimal128(38, 10), name
    for name in ("PricingQuantity", "ConsumedQuantity"):
        assert schema.field(name).type == pa.decimal128(38, 16), name
    for name in ("ChargePeriodStart", "ChargePeriodEnd", "BillingPeriodStart", "BillingPeriodEnd"):
        assert schema.field(name).type == pa.timestamp("us", tz="UTC"), name
    for name in ("BillingAccountId", "SubAccountId", "InvoiceId", "ChargeClass", "Tags"):
        assert schema.field(name).type == pa.string(), name
    assert schema.field("x_Estimated").type == pa.bool_()
    for name in MANDATORY:
        assert not schema.field(name).nullable, name
        assert table.column(name).null_count == 0, name
    assert table.column("InvoiceId").null_count == table.num_rows
    assert table.column("ChargeClass").null_count == table.num_rows
    assert table.column("BillingAccountId").to_pylist()[0] == "012345678901"  # leading zero
    back = table.to_pylist()
    assert check_rows(back) == []
    assert back[0]["BilledCost"] == Decimal("516.00")
    assert back[0]["ChargePeriodStart"] == DAY


def test_the_same_rows_give_the_same_bytes() -> None:
    assert to_parquet(rows()) == to_parquet(rows())
    assert to_csv(rows()) == to_csv(rows())


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"PricingUnit": "GB-Mo"}, "unit format"),
        ({"ConsumedUnit": "GiB-Month"}, "unit format"),
        ({"InvoiceIssuerName": "Amazon Web Services, Inc."}, "third-party"),
        ({"ChargeClass": ""}, "empty string"),
        ({"ChargeClass": "Refund"}, "Correction"),
        ({"BillingAccountId": 12345678901}, "not String"),
        ({"BilledCost": "1.0"}, "not Decimal"),
        ({"BilledCost": None}, "mandatory and null"),
        ({"ChargePeriodStart": datetime(2026, 11, 2)}, "UTC"),  # noqa: DTZ001
        ({"ChargePeriodEnd": datetime(2026, 12, 2, tzinfo=UTC)}, "inside BillingPeriod"),
        ({"ListCost": Decimal(1)}, "ListCost is not ListUnitPrice x PricingQuantity"),
        ({"ContractedUnitPrice": Decimal(1)}, "ContractedCost is not"),
        ({"InvoiceId": "INV-1"}, "no invoice"),
        ({"PricingUnit": None}, "null together"),
        ({"ServiceCategory": "Spaceships"}, "ServiceCategory"),
        ({"Tags": "[1]"}, "JSON object"),
        ({"Tags": "{"}, "not JSON"),
        ({"BilledCost": Decimal(-1), "EffectiveCost": Decimal(-1)}, "negative"),
        ({"x_Other": "1"}, "neither a FOCUS"),
        ({"BillingCurrency": "usd"}, "ISO 4217"),
    ],
)
def test_the_checks_catch_each_broken_rule(change: dict[str, Any], expected: str) -> None:
    broken = {**rows()[0], **change}
    problems = " | ".join(check_rows([broken]))
    assert expected in problems, problems


def test_a_missing_column_and_two_categories_for_one_service_are_caught() -> None:
    sample = rows()
    del sample[0]["InvoiceIssuerName"]
    sample[1]["ServiceCategory"] = "Storage"
    problems = " | ".join(check_rows(sample))
    assert "InvoiceIssuerName is missing" in problems
    assert "'Amazon Elastic Compute Cloud' has 2 ServiceCategory values" in problems


# ------------------------------------------------------------------ charges from the ledger
ACCOUNT_ID = "123456789012"
SPOT_ID, OD_ID = "i-0c3c3c3c3c3c3c3c3", "i-0e5e5e5e5e5e5e5e5"
EVIL_NAME = '=HYPERLINK("http://x")'


def prices(**extra: Any) -> LedgerConfig:
    return LedgerConfig(live_prices=False, prices=PriceOverrides(as_of=DAY.date(), **extra))


class DiscountedEbs(PriceBook):
    """10 % off EBS (the price book gives none yet): a row must carry list and contracted
    unit prices apart."""

    def volume_rate(self, region: str, volume_type: str) -> Rate | None:
        rate = super().volume_rate(region, volume_type)
        if rate is None:
            return None
        return rate.model_copy(update={"effective_usd": rate.list_usd * Decimal("0.9")})


def ledger_of(config: LedgerConfig, *profiles: InstanceProfile, discounted_ebs: bool = False
              ) -> Ledger:  # fmt: skip
    ledger = memory_ledger(*profiles, config=config, now=DAY)
    if discounted_ebs:
        book = DiscountedEbs(config, ledger.price_cache, None, bundled_snapshot(), DAY.date())
        ledger.deps = dataclasses.replace(ledger.deps, prices=book)
    return ledger


def instance(instance_id: str, lifecycle: str, job: str) -> InstanceProfile:
    return InstanceProfile(
        instance_id=instance_id, instance_type="p5.48xlarge", region=REGION,
        availability_zone="us-east-1a", lifecycle=lifecycle,
        tags={"training-job": job, "Name": EVIL_NAME},
        volumes=(Volume(volume_id="vol-1", size_gib=300, volume_type="gp3"),),
    )  # fmt: skip


def test_spot_price_steps_give_a_row_per_rate_and_the_minimum_is_billed_not_consumed() -> None:
    """Spot from 22:00 to 22:30 (the price goes from $10 to $12 at 22:15), then a 20 s run
    at 23:00 that closes in the day: 900 s at $10; 900 s + 20 s used at $12, billed 900 s +
    60 s (the minimum, at the closing rate): $2.50 + $3.20 = $5.70."""
    t = DAY + timedelta(hours=22)
    series = (SpotPricePoint(from_=t, usd=Decimal(10)),
              SpotPricePoint(from_=t + timedelta(minutes=15), usd=Decimal(12)))  # fmt: skip
    config = prices(spot={"p5.48xlarge": series}, ebs_gb_month={"gp3": Decimal("0.08")})
    ledger = ledger_of(config, instance(SPOT_ID, "spot", "j"), discounted_ebs=True)
    events = Timeline()
    events.run(SPOT_ID, t, t + timedelta(minutes=30))
    events.run(SPOT_ID, t + timedelta(hours=1), t + timedelta(hours=1, seconds=20))
    events.apply(ledger)
    now = NEXT + timedelta(hours=1)
    records = job_records(ledger, "j", DAY)
    book = ledger.deps.prices.series
    charges = job_charges(records, DAY, now, book)
    spot = [c for c in charges if c.kind == "instance"]
    seconds = [
        (c.list_unit_price, round(c.pricing_quantity * 3600), round(c.consumed_quantity * 3600))
        for c in spot
    ]
    assert seconds == [(Decimal(10), 900, 900), (Decimal(12), 960, 920)]
    assert all(c.pricing_category == "Dynamic" for c in spot)
    assert all(c.sku_id == "SpotUsage:p5.48xlarge" and c.account == ACCOUNT_ID for c in spot)
    assert all((c.rate_source, c.rate_checked_on) == ("override", DAY.date()) for c in spot)
    assert sum(c.effective_cost for c in spot) == Decimal("5.70")
    assert sum(c.effective_cost for c in spot) == instance_between(
        records.all_segments(), DAY, NEXT, book
    )
    # 300 GiB x $0.072 (list $0.08) from 22:00 to midnight: 2 h of November's 720 h = $0.06
    (volume,) = [c for c in charges if c.kind == "ebs_volume"]
    assert abs(volume.pricing_quantity - Decimal(300) * 2 / 720) < Decimal("1e-20")
    assert abs(volume.effective_cost - Decimal("0.06")) < Decimal("1e-20")
    # The rows of the day add up to the day's cost as every other view splits it.
    day, _ = job_between(records, DAY, NEXT, now, book)
    assert abs(sum(c.effective_cost for c in charges) - day["total"]) < Decimal("1e-20")
    rows_ = [focus_row(c) for c in charges]
    assert check_rows(rows_) == []
    volume_row = next(r for r in rows_ if r["x_ChargeKind"] == "ebs_volume")
    assert volume_row["ServiceName"] == "Amazon Elastic Block Store"
    assert volume_row["ListUnitPrice"] == Decimal("0.08")
    assert volume_row["ContractedUnitPrice"] == Decimal("0.072")
    assert volume_row["PricingUnit"] == "GiB-Months"
    assert volume_row["ListCost"] == Decimal("0.08") * volume.pricing_quantity
    back = pq.read_table(io.BytesIO(to_parquet(rows_))).to_pylist()
    assert check_rows(back) == []
    assert [r["x_ChargeKind"] for r in back] == ["instance", "instance", "ebs_volume"]


def test_checkpoint_storage_rows_carry_a_quantity_in_gib_months() -> None:
    """30 GiB written at noon, never deleted, $0.023/GB-month: half a day of November is
    1/60 month (0.5 GiB-months, $0.0115); the next whole day 1 GiB-month ($0.023)."""
    ledger = ledger_of(prices(s3_gb_month=Decimal("0.023")))
    events = Timeline()
    events.write("ckpt", "runs/j/step-100/model.pt", DAY + timedelta(hours=12), 30 * GIB)
    events.apply(ledger)
    records = job_records(ledger, "j", DAY)
    now = NEXT + timedelta(days=3)
    (charge,) = job_charges(records, DAY, now, None)
    assert abs(charge.pricing_quantity - Decimal("0.5")) < Decimal("1e-20")
    assert abs(charge.effective_cost - Decimal("0.0115")) < Decimal("1e-20")
    assert charge.resource_id == "arn:aws:s3:::ckpt/runs/j/step-100/model.pt"
    assert charge.account == ACCOUNT_ID and charge.region == REGION
    assert "step 100" in charge.description and "30.000 GiB" in charge.description
    (next_day,) = job_charges(records, NEXT, now, None)
    assert abs(next_day.pricing_quantity - Decimal(1)) < Decimal("1e-20")
    assert check_rows([focus_row(charge), focus_row(next_day)]) == []


# ------------------------------------------------------------------------- CSV for people
@pytest.mark.parametrize(
    ("cell", "safe"),
    [
        ("=1+2", "'=1+2"),
        ("+SUM(A1)", "'+SUM(A1)"),
        ("-2+3", "'-2+3"),
        ("@cmd", "'@cmd"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("-1.5", "-1.5"),
        ("+3", "+3"),
        ("-1e-05", "-1e-05"),
        ("llama", "llama"),
        ('{"a": "=1"}', '{"a": "=1"}'),
        ("", ""),
    ],
)
def test_formula_cells_are_neutralised_numbers_are_not(cell: str, safe: str) -> None:
    assert neutralise(cell) == safe


def test_csv_nulls_are_empty_cells_and_formulas_are_neutralised() -> None:
    job = "=cmd|' /C calc'!A0"
    ledger = ledger_of(prices(ec2={"p5.48xlarge": Decimal(98)}), instance(OD_ID, "on-demand", job))
    events = Timeline()
    events.run(OD_ID, DAY + timedelta(hours=1))  # still running
    events.apply(ledger)
    charges = job_charges(job_records(ledger, job, DAY), DAY, NEXT, None)
    assert charges[0].kind == "instance" and charges[0].effective_cost == Decimal(98 * 23)
    typed = [focus_row(c) for c in charges]
    text = to_csv(typed)
    assert ',"",' not in text
    parsed = list(csv.DictReader(io.StringIO(text)))
    assert parsed[0]["ResourceName"] == '\'=HYPERLINK("http://x")'
    assert parsed[0]["x_JobId"] == "'=cmd|' /C calc'!A0"
    assert parsed[0]["InvoiceId"] == "" and parsed[0]["ChargeClass"] == ""
    assert json.loads(parsed[0]["Tags"])["Name"] == '=HYPERLINK("http://x")'  # inside JSON
    # Parquet is typed data: the value stays as it is.
    table = pq.read_table(io.BytesIO(to_parquet(typed)))
    assert table.column("ResourceName").to_pylist()[0] == '=HYPERLINK("http://x")'


def test_both_files_at_once_are_the_files_one_by_one() -> None:
    assert focus_files(rows()) == (to_parquet(rows()), to_csv(rows()))
