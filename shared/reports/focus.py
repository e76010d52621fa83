"""The daily FOCUS 1.2 export: one row per charge (resource, rate and finance day, cut at a UTC
month start), estimates marked.

A charge is generic (``Charge``): a resource of some kind, a period, a usage quantity in the
kind's unit, list and contracted unit prices, and the costs. ``KINDS`` gives each kind its
FOCUS service, category, resource type and unit, so that a new kind (provisioned IOPS,
capacity reservations, ...) is a row in that table and a producer of charges, nothing more.

Two files carry the same rows: Parquet (typed: what FinOps tools and the FinOps Foundation's
validator ingest) and CSV (for spreadsheets: nulls are empty cells, never ``""``, and text
cells that a spreadsheet would run as a formula are neutralised, see ``shared.reports.csv_safe``).
The Parquet strings are left as they are: typed data is not a formula.

FOCUS column names and value rules; the ``x_`` columns are ours.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any, Literal

from shared.domain.clock import month_start, next_month_start
from shared.reports.csv_safe import write_csv_columns
from shared.reports.parquet import Column, write_parquet_columns

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
    "fsx_storage": KindInfo("Amazon FSx", "Storage", "File Storage", "File System", "GiB-Months"),
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


def billing_period(at: datetime) -> tuple[datetime, datetime]:
    """The UTC month of ``at``: a charge's billing period (start, end)."""
    start = month_start(at)
    return start, next_month_start(start)


def focus_row(charge: Charge, billing: tuple[datetime, datetime] | None = None) -> dict[str, Any]:
    """The FOCUS row of a charge, typed: Decimal, aware datetime, str, bool or None;
    ``billing``: its billing period when known (``billing_period`` of its start)."""
    info = KINDS[charge.kind]
    billing_start, billing_end = billing or billing_period(charge.period_start)
    return {
        "AvailabilityZone": _text(charge.availability_zone),
        "BilledCost": charge.effective_cost,
        "BillingAccountId": charge.account,
        "BillingAccountName": None,
        "BillingCurrency": "USD",
        "BillingPeriodEnd": billing_end,
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
def column_cells(values: Sequence[Any], kind: ColumnType) -> list[str | None]:
    """One column's CSV cells: text of every value of ``kind``, a null as ``None``."""
    if kind in ("Decimal", "Quantity"):
        quantum = Decimal(1).scaleb(-(QUANTITY_SCALE if kind == "Quantity" else MONEY_SCALE))
        return [None if v is None else format(Decimal(v).quantize(quantum), "f") for v in values]
    if kind == "DateTime":  # a day's rows share a few periods: each time is written once
        written = {v: _utc_text(v) for v in dict.fromkeys(values) if v is not None}
        return [None if v is None else written[v] for v in values]
    if kind == "Boolean":
        return [None if v is None else "true" if v else "false" for v in values]
    return [None if v is None else str(v) for v in values]


def _utc_text(at: datetime) -> str:
    return str(at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))


def values_of(rows: Iterable[Mapping[str, Any]], names: Sequence[str]) -> dict[str, list[Any]]:
    """Each named column's values, in row order (a key a row lacks is a null)."""
    rows = list(rows)
    return {name: [row.get(name) for row in rows] for name in names}


def csv_of(columns: Sequence[tuple[str, ColumnType, bool]], values: Mapping[str, list[Any]]) -> str:
    """The CSV file of these columns' values (a null is an empty cell)."""
    cells = [column_cells(values[name], kind) for name, kind, _ in columns]
    return write_csv_columns([name for name, _, _ in columns], cells)


PARQUET_METADATA = {"FocusVersion": FOCUS_VERSION, "DataGenerator": "costtracker"}


def to_csv(rows: Iterable[Mapping[str, Any]]) -> str:
    """The rows for spreadsheets: a null is an empty cell, every other value has text."""
    return csv_of(COLUMNS, values_of(rows, COLUMN_NAMES))


def to_parquet(rows: Sequence[Mapping[str, Any]]) -> bytes:
    """The rows as typed Parquet (DECIMAL, TIMESTAMP UTC, STRING, BOOLEAN; nulls as nulls)."""
    return write_parquet_columns(
        PARQUET_COLUMNS, values_of(rows, COLUMN_NAMES), metadata=PARQUET_METADATA
    )


def files_of(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[tuple[str, ColumnType, bool]],
    parquet_columns: Sequence[Column],
    metadata: Mapping[str, str],
) -> tuple[bytes, str]:
    """The Parquet and CSV files of the rows in a FOCUS version's columns (its Parquet
    ``metadata``), the rows' columns read once for both."""
    values = values_of(rows, [name for name, _, _ in columns])
    parquet = write_parquet_columns(parquet_columns, values, metadata=metadata)
    return parquet, csv_of(columns, values)


def focus_files(rows: Sequence[Mapping[str, Any]]) -> tuple[bytes, str]:
    """``to_parquet`` and ``to_csv`` of the rows, their columns read once for both."""
    return files_of(rows, COLUMNS, PARQUET_COLUMNS, PARQUET_METADATA)
