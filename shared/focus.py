"""The daily FOCUS 1.2 export: one row per charge (resource, rate and UTC day), estimates marked.

A charge is generic (``Charge``): a resource of some kind, a period, a usage quantity in the
kind's unit, list and contracted unit prices, and the costs. ``KINDS`` gives each kind its
FOCUS service, category, resource type and unit, so that a new kind (provisioned IOPS,
capacity reservations, ...) is a row in that table and a producer of charges, nothing more.

Two files carry the same rows: Parquet (typed: what FinOps tools and the FinOps Foundation's
validator ingest) and CSV (for spreadsheets: nulls are empty cells, never ``""``, and text
cells that a spreadsheet would run as a formula are neutralised, see ``shared.csv_safe``).
The Parquet strings are left as they are: typed data is not a formula.

FOCUS column names and value rules; the ``x_`` columns are ours.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any, Literal

from shared.csv_safe import write_csv
from shared.domain.clocks import month_start, next_month_start
from shared.parquet import Column, write_parquet

FOCUS_VERSION = "1.2"
PROVIDER = "AWS"  # ProviderName = PublisherName = InvoiceIssuerName: AWS sells and bills
MONEY_SCALE = 10  # costs and unit prices: DECIMAL(38, 10)
QUANTITY_SCALE = 16  # quantities: DECIMAL(38, 16), so that price x quantity = cost holds

ColumnType = Literal["Decimal", "Quantity", "String", "DateTime", "JSON", "Boolean"]
# (column, type, nullable) in output order: FOCUS columns first, then ours (x_).
COLUMNS: tuple[tuple[str, ColumnType, bool], ...] = (
    ("AvailabilityZone", "String", True),
    ("BilledCost", "Decimal", False),
    ("BillingAccountId", "String", False),
    ("BillingAccountName", "String", True),
    ("BillingCurrency", "String", False),
    ("BillingPeriodEnd", "DateTime", False),
    ("BillingPeriodStart", "DateTime", False),
    ("CapacityReservationId", "String", True),
    ("CapacityReservationStatus", "String", True),
    ("ChargeCategory", "String", False),
    ("ChargeClass", "String", True),
    ("ChargeDescription", "String", True),
    ("ChargeFrequency", "String", True),
    ("ChargePeriodEnd", "DateTime", False),
    ("ChargePeriodStart", "DateTime", False),
    ("ConsumedQuantity", "Quantity", True),
    ("ConsumedUnit", "String", True),
    ("ContractedCost", "Decimal", False),
    ("ContractedUnitPrice", "Decimal", True),
    ("EffectiveCost", "Decimal", False),
    ("InvoiceId", "String", True),
    ("InvoiceIssuerName", "String", False),
    ("ListCost", "Decimal", False),
    ("ListUnitPrice", "Decimal", True),
    ("PricingCategory", "String", True),
    ("PricingCurrency", "String", True),
    ("PricingQuantity", "Quantity", True),
    ("PricingUnit", "String", True),
    ("ProviderName", "String", False),
    ("PublisherName", "String", False),
    ("RegionId", "String", True),
    ("RegionName", "String", True),
    ("ResourceId", "String", True),
    ("ResourceName", "String", True),
    ("ResourceType", "String", True),
    ("ServiceCategory", "String", False),
    ("ServiceName", "String", False),
    ("ServiceSubcategory", "String", True),
    ("SkuId", "String", True),
    ("SkuPriceId", "String", True),
    ("SubAccountId", "String", True),
    ("SubAccountName", "String", True),
    ("Tags", "JSON", True),
    ("x_Estimated", "Boolean", False),
    ("x_JobId", "String", False),
    ("x_ChargeKind", "String", False),
    ("x_RateSource", "String", True),
    ("x_RateCheckedOn", "String", True),
)
COLUMN_NAMES = tuple(name for name, _, _ in COLUMNS)
MANDATORY = tuple(name for name, _, nullable in COLUMNS if not nullable)
_PARQUET_KIND = {
    "Decimal": "decimal",
    "Quantity": "decimal",
    "String": "string",
    "DateTime": "timestamp",
    "JSON": "string",
    "Boolean": "boolean",
}
PARQUET_COLUMNS = tuple(
    Column(
        name,
        _PARQUET_KIND[kind],  # type: ignore[arg-type]
        nullable,
        scale=QUANTITY_SCALE if kind == "Quantity" else MONEY_SCALE,
    )
    for name, kind, nullable in COLUMNS
)
CHARGE_CATEGORIES = {"Usage", "Purchase", "Tax", "Credit", "Adjustment"}
PRICING_CATEGORIES = {"Standard", "Dynamic", "Committed", "Other"}
SERVICE_CATEGORIES = {
    "AI and Machine Learning", "Analytics", "Business Applications", "Compute", "Databases",
    "Developer Tools", "Multicloud", "Identity", "Integration", "Internet of Things",
    "Management and Governance", "Media", "Migration", "Mobile", "Networking", "Security",
    "Storage", "Web", "Other",
}  # fmt: skip
FOCUS_METADATA = {
    "FocusVersion": FOCUS_VERSION,
    "DataGenerator": "costtracker",
    "Columns": [
        {"ColumnName": n, "DataType": "Decimal" if t == "Quantity" else t, "Nullable": nl}
        for n, t, nl in COLUMNS
    ],
    "Notes": (
        "Estimates from live events (x_Estimated = true) until reconciled with the bill. "
        "The Parquet file is the typed copy; the CSV is for spreadsheets (text cells that "
        "begin with = + - @ or a tab or carriage return carry a leading apostrophe)."
    ),
}
REGION_NAMES = {
    "us-east-1": "US East (N. Virginia)", "us-east-2": "US East (Ohio)",
    "us-west-1": "US West (N. California)", "us-west-2": "US West (Oregon)",
    "ca-central-1": "Canada (Central)", "sa-east-1": "South America (Sao Paulo)",
    "eu-west-1": "Europe (Ireland)", "eu-west-2": "Europe (London)",
    "eu-west-3": "Europe (Paris)", "eu-central-1": "Europe (Frankfurt)",
    "eu-central-2": "Europe (Zurich)", "eu-north-1": "Europe (Stockholm)",
    "eu-south-1": "Europe (Milan)", "eu-south-2": "Europe (Spain)",
    "ap-northeast-1": "Asia Pacific (Tokyo)", "ap-northeast-2": "Asia Pacific (Seoul)",
    "ap-northeast-3": "Asia Pacific (Osaka)", "ap-southeast-1": "Asia Pacific (Singapore)",
    "ap-southeast-2": "Asia Pacific (Sydney)", "ap-south-1": "Asia Pacific (Mumbai)",
    "ap-east-1": "Asia Pacific (Hong Kong)", "me-central-1": "Middle East (UAE)",
}  # fmt: skip


@dataclass(frozen=True)
class KindInfo:
    """What FOCUS says about every charge of one kind."""

    service_name: str
    service_category: str
    service_subcategory: str
    resource_type: str
    unit: str  # FOCUS unit format: both ConsumedUnit and PricingUnit


# One ServiceCategory (and one ServiceSubcategory) per ServiceName: EBS is its own service.
KINDS: dict[str, KindInfo] = {
    "instance": KindInfo(
        "Amazon Elastic Compute Cloud", "Compute", "Virtual Machines", "Instance", "Hours"
    ),
    "capacity_reservation": KindInfo(
        "Amazon Elastic Compute Cloud",
        "Compute",
        "Virtual Machines",
        "Capacity Reservation",
        "Hours",
    ),
    "ebs_volume": KindInfo(
        "Amazon Elastic Block Store", "Storage", "Block Storage", "Volume", "GiB-Months"
    ),
    "ebs_iops": KindInfo(
        "Amazon Elastic Block Store", "Storage", "Block Storage", "Volume", "IOPS-Months"
    ),
    "ebs_throughput": KindInfo(
        "Amazon Elastic Block Store", "Storage", "Block Storage", "Volume", "MiBps-Months"
    ),
    "checkpoint_storage": KindInfo(
        "Amazon Simple Storage Service", "Storage", "Object Storage", "Object", "GiB-Months"
    ),
    "sagemaker_training": KindInfo(
        "Amazon SageMaker", "AI and Machine Learning", "Machine Learning", "Training Job", "Hours"
    ),
    "sagemaker_warm_pool": KindInfo(
        "Amazon SageMaker",
        "AI and Machine Learning",
        "Machine Learning",
        "Training Warm Pool",
        "Hours",
    ),
    "sagemaker_storage": KindInfo(
        "Amazon SageMaker", "AI and Machine Learning", "Machine Learning", "ML Storage", "GB-Months"
    ),
}
_KIND_ORDER = {kind: n for n, kind in enumerate(KINDS)}


@dataclass(frozen=True)
class Charge:
    """One FOCUS row: what one resource cost at one rate inside one period.

    ``pricing_quantity`` is what is billed (a segment's 60 s minimum included),
    ``consumed_quantity`` what was used; both in ``KINDS[kind].unit``. Costs are the
    ledger's; list cost = list unit price x pricing quantity (contracted likewise).
    """

    kind: str
    job_id: str
    account: str
    region: str
    resource_id: str
    period_start: datetime
    period_end: datetime
    pricing_quantity: Decimal
    consumed_quantity: Decimal
    list_unit_price: Decimal
    contracted_unit_price: Decimal
    list_cost: Decimal
    contracted_cost: Decimal
    effective_cost: Decimal
    description: str
    sku_id: str | None = None
    pricing_category: str = "Standard"
    availability_zone: str | None = None
    resource_name: str | None = None
    capacity_reservation_id: str | None = None
    capacity_reservation_status: str | None = None
    tags: Mapping[str, str] = field(default_factory=dict)
    rate_source: str | None = None
    rate_checked_on: date | None = None


def _text(value: str | None) -> str | None:
    """FOCUS has nulls, not empty strings."""
    return value or None


def focus_row(charge: Charge) -> dict[str, Any]:
    """The FOCUS row of a charge, typed: Decimal, aware datetime, str, bool or None."""
    info = KINDS[charge.kind]
    billing_start = month_start(charge.period_start)
    return {
        "AvailabilityZone": _text(charge.availability_zone),
        "BilledCost": charge.effective_cost,
        "BillingAccountId": charge.account,
        "BillingAccountName": None,
        "BillingCurrency": "USD",
        "BillingPeriodEnd": next_month_start(billing_start),
        "BillingPeriodStart": billing_start,
        "CapacityReservationId": _text(charge.capacity_reservation_id),
        "CapacityReservationStatus": _text(charge.capacity_reservation_status),
        "ChargeCategory": "Usage",
        "ChargeClass": None,
        "ChargeDescription": _text(charge.description),
        "ChargeFrequency": "Usage-Based",
        "ChargePeriodEnd": charge.period_end,
        "ChargePeriodStart": charge.period_start,
        "ConsumedQuantity": charge.consumed_quantity,
        "ConsumedUnit": info.unit,
        "ContractedCost": charge.contracted_cost,
        "ContractedUnitPrice": charge.contracted_unit_price,
        "EffectiveCost": charge.effective_cost,
        "InvoiceId": None,  # an estimate belongs to no invoice yet
        "InvoiceIssuerName": PROVIDER,
        "ListCost": charge.list_cost,
        "ListUnitPrice": charge.list_unit_price,
        "PricingCategory": charge.pricing_category,
        "PricingCurrency": "USD",
        "PricingQuantity": charge.pricing_quantity,
        "PricingUnit": info.unit,
        "ProviderName": PROVIDER,
        "PublisherName": PROVIDER,
        "RegionId": _text(charge.region),
        "RegionName": REGION_NAMES.get(charge.region),
        "ResourceId": _text(charge.resource_id),
        "ResourceName": _text(charge.resource_name),
        "ResourceType": info.resource_type,
        "ServiceCategory": info.service_category,
        "ServiceName": info.service_name,
        "ServiceSubcategory": info.service_subcategory,
        "SkuId": _text(charge.sku_id),
        "SkuPriceId": None,
        "SubAccountId": charge.account,
        "SubAccountName": None,
        "Tags": json.dumps(dict(charge.tags), sort_keys=True) if charge.tags else None,
        "x_Estimated": True,
        "x_JobId": charge.job_id,
        "x_ChargeKind": charge.kind,
        "x_RateSource": charge.rate_source,
        "x_RateCheckedOn": charge.rate_checked_on.isoformat() if charge.rate_checked_on else None,
    }


# --------------------------------------------------------------------- charges from the ledger
def charge_order(c: Charge) -> tuple[Any, ...]:
    return (c.job_id, _KIND_ORDER[c.kind], c.resource_id, c.period_start, c.list_unit_price,
            c.contracted_unit_price)  # fmt: skip


# ------------------------------------------------------------------------------- the files
def _cell(value: Any, kind: ColumnType) -> str | None:
    if value is None:
        return None
    if kind in ("Decimal", "Quantity"):
        scale = QUANTITY_SCALE if kind == "Quantity" else MONEY_SCALE
        return format(Decimal(value).quantize(Decimal(1).scaleb(-scale)), "f")
    if kind == "DateTime":
        return str(value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
    if kind == "Boolean":
        return "true" if value else "false"
    return str(value)


def to_csv(rows: Iterable[Mapping[str, Any]]) -> str:
    """The rows for spreadsheets: a null is an empty cell, every other value has text."""
    return write_csv(
        COLUMN_NAMES, ([_cell(row.get(n), kind) for n, kind, _ in COLUMNS] for row in rows)
    )


def to_parquet(rows: Sequence[Mapping[str, Any]]) -> bytes:
    """The rows as typed Parquet (DECIMAL, TIMESTAMP UTC, STRING, BOOLEAN; nulls as nulls)."""
    return write_parquet(
        PARQUET_COLUMNS,
        rows,
        metadata={"FocusVersion": FOCUS_VERSION, "DataGenerator": "costtracker"},
    )


# ------------------------------------------------------------------------------ the checks
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
