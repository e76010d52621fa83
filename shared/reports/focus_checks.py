"""FOCUS 1.2 row checks (``check_rows``): the column types and value rules of the
specification and the relations between columns, on typed rows (as written, or read back
from the Parquet file)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from shared.reports.focus import (
    CHARGE_CATEGORIES,
    COLUMNS,
    PRICING_CATEGORIES,
    SERVICE_CATEGORIES,
)

_DATA = "b|Kb|Mb|Gb|Tb|Pb|Eb|B|KB|MB|GB|TB|PB|EB|Kib|Mib|Gib|Tib|Pib|Eib|KiB|MiB|GiB|TiB|PiB|EiB"
_TIMES = "Year|Month|Day|Hour|Minute|Second"
_PLURAL = "Years|Months|Days|Hours|Minutes|Seconds"
_COUNT = r"[A-Za-z][A-Za-z0-9]*(?: [A-Za-z][A-Za-z0-9]*)*"
UNIT_FORMAT = re.compile(
    rf"^(?:(?:{_DATA}|{_TIMES}|{_PLURAL}|{_COUNT})"
    rf"|(?:{_DATA}|{_COUNT})-(?:{_PLURAL})"
    rf"|(?:{_DATA}|{_COUNT}|{_PLURAL})/(?:{_TIMES})"
    rf"|[0-9]+ (?:{_DATA}|{_TIMES}|{_PLURAL}|{_COUNT})"
    rf"|(?:{_DATA}|{_COUNT}|{_PLURAL})/[0-9]+ (?:{_PLURAL}))$"
)
_PRODUCTS = (
    ("ListUnitPrice", "ListCost"),
    ("ContractedUnitPrice", "ContractedCost"),
)


def check_rows(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """FOCUS 1.2 rules our rows must meet, on typed rows (as written, or read back from
    Parquet): columns, types, nulls, units, provider and issuer, periods, services."""
    problems: list[str] = []
    types = {name: kind for name, kind, _ in COLUMNS}
    categories: dict[str, set[str | None]] = {}
    subcategories: dict[str, set[str | None]] = {}
    for n, row in enumerate(rows):
        where = f"row {n + 1}"
        for column in row:
            if column not in types:
                problems.append(f"{where}: {column} is neither a FOCUS nor an x_ column")
        for column, kind, nullable in COLUMNS:
            if column not in row:
                problems.append(f"{where}: {column} is missing")
                continue
            problems += _check_value(where, column, kind, nullable, row[column])
        problems += _check_relations(where, row)
        service = row.get("ServiceName")
        if isinstance(service, str):
            categories.setdefault(service, set()).add(row.get("ServiceCategory"))
            subcategories.setdefault(service, set()).add(row.get("ServiceSubcategory"))
    for service, values in sorted(categories.items()):
        if len(values) != 1:
            problems.append(f"ServiceName {service!r} has {len(values)} ServiceCategory values")
    for service, subs in sorted(subcategories.items()):
        if len(subs) != 1:
            problems.append(f"ServiceName {service!r} has {len(subs)} ServiceSubcategory values")
    return problems


def _check_value(where: str, column: str, kind: str, nullable: bool, value: Any) -> list[str]:
    if value is None:
        return [] if nullable else [f"{where}: {column} is mandatory and null"]
    problems = []
    expected: type | tuple[type, ...] = {
        "Decimal": Decimal, "Quantity": Decimal, "String": str, "JSON": str,
        "DateTime": datetime, "Boolean": bool,
    }[kind]  # fmt: skip
    if not isinstance(value, expected):
        return [f"{where}: {column} is a {type(value).__name__}, not {kind}"]
    if isinstance(value, str) and not value:
        problems.append(f"{where}: {column} is an empty string (FOCUS has nulls)")
    if isinstance(value, Decimal) and not value.is_finite():
        problems.append(f"{where}: {column} is not a finite decimal")
    if isinstance(value, datetime) and (value.tzinfo is None or value.utcoffset()):
        problems.append(f"{where}: {column} is not a UTC time")
    if kind == "JSON":
        try:
            parsed = json.loads(value)
            if not isinstance(parsed, dict) or not all(isinstance(v, str) for v in parsed.values()):
                problems.append(f"{where}: {column} is not a JSON object of strings")
        except ValueError:
            problems.append(f"{where}: {column} is not JSON")
    if column in ("ConsumedUnit", "PricingUnit") and not UNIT_FORMAT.match(value):
        problems.append(f"{where}: {column} {value!r} does not follow the FOCUS unit format")
    return problems


def _check_relations(where: str, row: Mapping[str, Any]) -> list[str]:
    problems = []
    for column in ("BilledCost", "EffectiveCost", "ListCost", "ContractedCost"):
        value = row.get(column)
        if isinstance(value, Decimal) and value < 0 and row.get("ChargeCategory") == "Usage":
            problems.append(f"{where}: {column} is negative")
    if row.get("ChargeCategory") not in CHARGE_CATEGORIES:
        problems.append(f"{where}: ChargeCategory {row.get('ChargeCategory')!r} not allowed")
    if row.get("ChargeClass") not in (None, "Correction"):
        problems.append(f"{where}: ChargeClass must be null or Correction")
    if row.get("PricingCategory") not in (None, *PRICING_CATEGORIES):
        problems.append(f"{where}: PricingCategory {row.get('PricingCategory')!r} not allowed")
    if row.get("ServiceCategory") not in SERVICE_CATEGORIES:
        problems.append(f"{where}: ServiceCategory {row.get('ServiceCategory')!r} unknown")
    if row.get("BillingCurrency") != "USD" or row.get("PricingCurrency") not in (None, "USD"):
        problems.append(f"{where}: BillingCurrency and PricingCurrency must be USD (ISO 4217)")
    if row.get("ProviderName") != row.get("InvoiceIssuerName") and row.get("BilledCost") != 0:
        problems.append(
            f"{where}: ProviderName differs from InvoiceIssuerName (a third-party charge) "
            "but BilledCost is not 0"
        )
    if row.get("x_Estimated") and row.get("InvoiceId") is not None:
        problems.append(f"{where}: an estimate belongs to no invoice (InvoiceId must be null)")
    pairs = (("PricingQuantity", "PricingUnit"), ("ConsumedQuantity", "ConsumedUnit"))
    for quantity, unit in pairs:
        if (row.get(quantity) is None) != (row.get(unit) is None):
            problems.append(f"{where}: {quantity} and {unit} must be null together")
    pricing_quantity = row.get("PricingQuantity")
    for price, cost in _PRODUCTS:
        unit_price, total = row.get(price), row.get(cost)
        if not isinstance(unit_price, Decimal) or not isinstance(pricing_quantity, Decimal):
            continue
        if not isinstance(total, Decimal) or abs(unit_price * pricing_quantity - total) > Decimal(
            "1e-9"
        ) * max(abs(total), Decimal(1)):
            problems.append(f"{where}: {cost} is not {price} x PricingQuantity")
    try:
        cps, cpe = row["ChargePeriodStart"], row["ChargePeriodEnd"]
        bps, bpe = row["BillingPeriodStart"], row["BillingPeriodEnd"]
        if not (bps <= cps < cpe <= bpe):
            problems.append(f"{where}: ChargePeriod not inside BillingPeriod")
    except (KeyError, TypeError):
        problems.append(f"{where}: charge and billing periods must be times")
    return problems
