"""The FOCUS export's own checks of FOCUS 1.2 rules, its charges, and its two files."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from shared.costing import instance_cost, instance_cost_between, running_cost_between
from shared.csv_safe import neutralise
from shared.focus import (
    COLUMN_NAMES,
    KINDS,
    MANDATORY,
    check_rows,
    focus_row,
    job_charges,
    to_csv,
    to_parquet,
)
from shared.models import (
    CheckpointObject,
    InstanceProfile,
    InstanceRecord,
    ObjectWrite,
    Rate,
    RateSource,
    RateStep,
    Transition,
    Volume,
)
from tests.unit.focus_samples import DAY, NEXT, every_kind

GIB = 2**30


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
def rate(usd: str, effective: str | None = None, at: datetime = DAY) -> Rate:
    return Rate(list_usd=Decimal(usd), effective_usd=Decimal(effective or usd),
                source=RateSource.OVERRIDE, checked_on=at.date(), region="us-east-1")  # fmt: skip


def record(
    lifecycle: str, transitions: list[tuple[str, datetime, str]], steps: list[RateStep]
) -> InstanceRecord:
    profile = InstanceProfile(
        instance_id="i-0c3c3c3c3c3c3c3c3", instance_type="p5.48xlarge", region="us-east-1",
        account="123456789012", availability_zone="us-east-1a", lifecycle=lifecycle,  # type: ignore[arg-type]
        tags={"training-job": "j", "Name": "=HYPERLINK(\"http://x\")"},
        volumes=(Volume(volume_id="vol-1", size_gib=300, volume_type="gp3"),),
    )  # fmt: skip
    return InstanceRecord(
        profile=profile,
        job_id="j",
        transitions=tuple(Transition(event_id=e, at=at, state=s) for e, at, s in transitions),  # type: ignore[arg-type]
        segment_rates={transitions[0][0]: tuple(steps)},
        volume_rates={"gp3": rate("0.08", "0.072")},
    )


def test_spot_price_steps_give_a_row_per_rate_and_the_minimum_is_billed_not_consumed() -> None:
    """Spot from 22:00 to 23:59:30 (a price change at 23:00) then a 20 s run that closes in
    the day: 20 s used, 60 s billed at the closing rate."""
    t = DAY + timedelta(hours=22)
    spot = record(
        "spot",
        [("a", t, "running"), ("b", t + timedelta(minutes=30), "stopped")],
        [RateStep(since=t, rate=rate("10")), RateStep(since=t + timedelta(minutes=15),
                                                      rate=rate("12"))],
    )  # fmt: skip
    short = spot.model_copy(
        update={
            "transitions": (
                *spot.transitions,
                Transition(event_id="c", at=t + timedelta(hours=1), state="running"),
                Transition(event_id="d", at=t + timedelta(hours=1, seconds=20), state="stopped"),
            ),
            "segment_rates": {**spot.segment_rates, "c": (RateStep(since=t, rate=rate("12")),)},
        }
    )
    now = NEXT + timedelta(hours=1)
    charges = job_charges("j", [short], [], DAY, now, "123456789012")
    instance = [c for c in charges if c.kind == "instance"]
    seconds = [
        (c.list_unit_price, round(c.pricing_quantity * 3600), round(c.consumed_quantity * 3600))
        for c in instance
    ]
    assert seconds == [(Decimal(10), 900, 900), (Decimal(12), 960, 920)]
    assert all(c.pricing_category == "Dynamic" for c in instance)
    day_total = running_cost_between(instance_cost(short, now), DAY, NEXT, now)
    assert abs(sum(c.effective_cost for c in instance) - day_total) < Decimal("1e-20")
    both = instance_cost_between(short, DAY, NEXT, now)
    assert abs(sum(c.effective_cost for c in charges) - both) < Decimal("1e-20")
    rows_ = [focus_row(c) for c in charges]
    assert check_rows(rows_) == []
    volume = next(r for r in rows_ if r["x_ChargeKind"] == "ebs_volume")
    assert volume["ServiceName"] == "Amazon Elastic Block Store"
    assert volume["ListUnitPrice"] == Decimal("0.08")
    assert volume["ContractedUnitPrice"] == Decimal("0.072")
    assert volume["PricingUnit"] == "GiB-Months"


def test_checkpoint_storage_rows_carry_a_quantity_in_gib_months() -> None:
    obj = CheckpointObject(
        bucket="ckpt", key="j/step-100.pt", job_id="j", step=100, region="us-east-1",
        writes=(ObjectWrite(event_id="w", at=DAY + timedelta(hours=12), size_bytes=30 * GIB),),
        rate=rate("0.023"),
    )  # fmt: skip
    (charge,) = job_charges("j", [], [obj], DAY, NEXT + timedelta(days=3), "123456789012")
    assert charge.pricing_quantity == Decimal(30) * Decimal(43200) / Decimal(30 * 86400)
    assert charge.resource_id == "arn:aws:s3:::ckpt/j/step-100.pt"
    assert check_rows([focus_row(charge)]) == []


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
    t = DAY + timedelta(hours=1)
    evil = record("on-demand", [("a", t, "running")], [RateStep(since=t, rate=rate("98"))])
    charges = job_charges("=cmd|' /C calc'!A0", [evil], [], DAY, NEXT, "123456789012")
    typed = [focus_row(c) for c in charges]
    text = to_csv(typed)
    assert ',"",' not in text
    parsed = list(csv.DictReader(io.StringIO(text)))
    assert parsed[0]["ResourceName"] == "'=HYPERLINK(\"http://x\")"
    assert parsed[0]["x_JobId"] == "'=cmd|' /C calc'!A0"
    assert parsed[0]["InvoiceId"] == "" and parsed[0]["ChargeClass"] == ""
    assert json.loads(parsed[0]["Tags"])["Name"] == '=HYPERLINK("http://x")'  # inside JSON
    # Parquet is typed data: the value stays as it is.
    table = pq.read_table(io.BytesIO(to_parquet(typed)))
    assert table.column("ResourceName").to_pylist()[0] == '=HYPERLINK("http://x")'
