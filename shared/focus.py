"""The daily FOCUS 1.2 export: one row per resource and day, our estimates marked.

FOCUS (FinOps Open Cost and Usage Specification) column names and value rules; the
``x_`` columns are ours. The CSV quotes every value so that a reader cannot turn an
account id into a number; ``FOCUS_METADATA`` says each column's type.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from shared.costing import (
    GIB,
    ebs_cost_between,
    ebs_window,
    instance_cost,
    month_start,
    next_month_start,
    object_spans,
    running_cost_between,
    storage_cost_between,
    whole_seconds,
)
from shared.models import CheckpointObject, InstanceRecord

FOCUS_VERSION = "1.2"
# (column, type, nullable) in output order: FOCUS columns first, then ours (x_).
COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("BilledCost", "Decimal", False),
    ("BillingAccountId", "String", False),
    ("BillingAccountName", "String", True),
    ("BillingCurrency", "String", False),
    ("BillingPeriodEnd", "DateTime", False),
    ("BillingPeriodStart", "DateTime", False),
    ("ChargeCategory", "String", False),
    ("ChargeClass", "String", True),
    ("ChargeDescription", "String", True),
    ("ChargeFrequency", "String", True),
    ("ChargePeriodEnd", "DateTime", False),
    ("ChargePeriodStart", "DateTime", False),
    ("ConsumedQuantity", "Decimal", True),
    ("ConsumedUnit", "String", True),
    ("ContractedCost", "Decimal", False),
    ("ContractedUnitPrice", "Decimal", True),
    ("EffectiveCost", "Decimal", False),
    ("InvoiceIssuerName", "String", False),
    ("ListCost", "Decimal", False),
    ("ListUnitPrice", "Decimal", True),
    ("PricingCategory", "String", True),
    ("PricingCurrency", "String", True),
    ("PricingQuantity", "Decimal", True),
    ("PricingUnit", "String", True),
    ("ProviderName", "String", False),
    ("PublisherName", "String", False),
    ("RegionId", "String", True),
    ("RegionName", "String", True),
    ("AvailabilityZone", "String", True),
    ("ResourceId", "String", True),
    ("ResourceName", "String", True),
    ("ResourceType", "String", True),
    ("ServiceCategory", "String", False),
    ("ServiceSubcategory", "String", True),
    ("ServiceName", "String", False),
    ("SkuId", "String", True),
    ("SkuPriceId", "String", True),
    ("SubAccountId", "String", True),
    ("SubAccountName", "String", True),
    ("Tags", "JSON", True),
    ("x_Estimated", "Boolean", False),
    ("x_JobId", "String", False),
    ("x_RateSource", "String", True),
    ("x_RateCheckedOn", "String", True),
)
MANDATORY = tuple(name for name, _, nullable in COLUMNS if not nullable)
CHARGE_CATEGORIES = {"Usage", "Purchase", "Tax", "Credit", "Adjustment"}
SERVICE_CATEGORIES = {
    "AI and Machine Learning", "Analytics", "Business Applications", "Compute", "Databases",
    "Developer Tools", "Multicloud", "Identity", "Integration", "Internet of Things",
    "Management and Governance", "Media", "Migration", "Mobile", "Networking", "Security",
    "Storage", "Web", "Other",
}  # fmt: skip
FOCUS_METADATA = {
    "FocusVersion": FOCUS_VERSION,
    "DataGenerator": "costtracker",
    "Columns": [{"ColumnName": n, "DataType": t, "Nullable": nl} for n, t, nl in COLUMNS],
    "Notes": "Estimates from live events (x_Estimated = true) until reconciled with the bill.",
}


def _ts(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _money(value: Decimal) -> str:
    return format(value.quantize(Decimal("0.0000000001")), "f")


def _base(
    day_start: datetime, account: str, region: str, job_id: str, tags: dict[str, str]
) -> dict[str, Any]:
    billing_start = month_start(day_start)
    return {
        "BillingAccountId": account,
        "BillingAccountName": None,
        "BillingCurrency": "USD",
        "BillingPeriodStart": _ts(billing_start),
        "BillingPeriodEnd": _ts(next_month_start(billing_start)),
        "ChargeCategory": "Usage",
        "ChargeClass": None,
        "ChargeFrequency": "Usage-Based",
        "ChargePeriodStart": _ts(day_start),
        "ChargePeriodEnd": _ts(day_start + timedelta(days=1)),
        "InvoiceIssuerName": "Amazon Web Services, Inc.",
        "ProviderName": "AWS",
        "PublisherName": "AWS",
        "PricingCurrency": "USD",
        "RegionId": region,
        "RegionName": None,
        "SubAccountId": account,
        "SubAccountName": None,
        "Tags": json.dumps(tags, sort_keys=True),
        "x_Estimated": "true",
        "x_JobId": job_id,
    }


def focus_rows(
    job_id: str,
    records: Sequence[InstanceRecord],
    checkpoints: Sequence[CheckpointObject],
    day_start: datetime,
    now: datetime,
    account: str,
) -> list[dict[str, Any]]:
    """The job's FOCUS rows for one UTC day: running time, volumes, checkpoint objects."""
    day_end = day_start + timedelta(days=1)
    rows = []
    for record in records:
        profile = record.profile
        cost = instance_cost(record, now)
        running = running_cost_between(cost, day_start, day_end, now)
        list_cost = running_cost_between(cost, day_start, day_end, now, list_price=True)
        seconds = 0
        rate_source = checked = None
        for priced in cost.segments:
            seg_end = priced.segment.end or max(now, priced.segment.start)
            lo, hi = max(day_start, priced.segment.start), min(day_end, seg_end)
            if lo < hi:
                seconds += whole_seconds(hi - lo)
            if priced.steps:
                rate_source = priced.steps[0].rate.source.value
                checked = priced.steps[0].rate.checked_on.isoformat()
        if running > 0 or seconds:
            hours = Decimal(seconds) / 3600
            rows.append(
                {
                    **_base(day_start, account, profile.region, job_id, profile.tags),
                    "BilledCost": _money(running),
                    "EffectiveCost": _money(running),
                    "ContractedCost": _money(running),
                    "ListCost": _money(list_cost),
                    "ChargeDescription": (
                        f"Estimated by costtracker from EC2 state events: {profile.instance_type} "
                        f"{profile.lifecycle} ({profile.platform}) running time"
                    ),
                    "ConsumedQuantity": _money(hours),
                    "ConsumedUnit": "Hours",
                    "PricingQuantity": _money(hours),
                    "PricingUnit": "Hours",
                    "PricingCategory": "Dynamic" if profile.lifecycle == "spot" else "Standard",
                    "AvailabilityZone": profile.availability_zone or None,
                    "ResourceId": profile.instance_id,
                    "ResourceName": profile.tags.get("Name"),
                    "ResourceType": "Instance",
                    "ServiceCategory": "Compute",
                    "ServiceSubcategory": "Virtual Machines",
                    "ServiceName": "Amazon Elastic Compute Cloud",
                    "SkuId": profile.instance_type,
                    "x_RateSource": rate_source,
                    "x_RateCheckedOn": checked,
                }
            )
        window = ebs_window(record.transitions, now)
        if window is None or window[0] >= day_end or window[1] <= day_start:
            continue
        for volume in profile.volumes:
            one = record.model_copy(
                update={"profile": profile.model_copy(update={"volumes": (volume,)})}
            )
            ebs = ebs_cost_between(one, day_start, day_end, now)
            rate = record.volume_rates.get(volume.volume_type)
            lo, hi = max(day_start, window[0]), min(day_end, window[1])
            month_seconds = Decimal(
                (next_month_start(day_start) - month_start(day_start)).days * 86400
            )
            gb_months = Decimal(volume.size_gib) * Decimal(whole_seconds(hi - lo)) / month_seconds
            rows.append(
                {
                    **_base(day_start, account, profile.region, job_id, profile.tags),
                    "BilledCost": _money(ebs),
                    "EffectiveCost": _money(ebs),
                    "ContractedCost": _money(ebs),
                    "ListCost": _money(ebs),
                    "ChargeDescription": (
                        f"Estimated by costtracker: EBS {volume.volume_type} {volume.size_gib} GiB "
                        f"attached to {profile.instance_id}"
                    ),
                    "ConsumedQuantity": _money(gb_months),
                    "ConsumedUnit": "GB-Mo",
                    "PricingQuantity": _money(gb_months),
                    "PricingUnit": "GB-Mo",
                    "PricingCategory": "Standard",
                    "ListUnitPrice": _money(rate.list_usd) if rate else None,
                    "ContractedUnitPrice": _money(rate.effective_usd) if rate else None,
                    "AvailabilityZone": profile.availability_zone or None,
                    "ResourceId": volume.volume_id,
                    "ResourceName": None,
                    "ResourceType": "Volume",
                    "ServiceCategory": "Storage",
                    "ServiceSubcategory": "Block Storage",
                    "ServiceName": "Amazon Elastic Compute Cloud",
                    "SkuId": f"EBS:VolumeUsage.{volume.volume_type}",
                    "x_RateSource": rate.source.value if rate else None,
                    "x_RateCheckedOn": rate.checked_on.isoformat() if rate else None,
                }
            )
    for obj in checkpoints:
        stored_usd = storage_cost_between(obj, day_start, day_end, now)
        stored = [
            s
            for s in object_spans(obj)
            if s.start < day_end and (s.end is None or s.end > day_start)
        ]
        if not stored:
            continue
        rate = obj.rate
        rows.append(
            {
                **_base(day_start, account, obj.region, job_id, {}),
                "BilledCost": _money(stored_usd),
                "EffectiveCost": _money(stored_usd),
                "ContractedCost": _money(stored_usd),
                "ListCost": _money(stored_usd),
                "ChargeDescription": (
                    f"Estimated by costtracker from S3 events: checkpoint object"
                    f"{' step ' + str(obj.step) if obj.step is not None else ''} "
                    f"({max(s.size_bytes for s in stored) / GIB:.3f} GB)"
                ),
                "PricingUnit": "GB-Mo",
                "PricingCategory": "Standard",
                "ListUnitPrice": _money(rate.list_usd) if rate else None,
                "ResourceId": f"arn:aws:s3:::{obj.bucket}/{obj.key}",
                "ResourceName": obj.key,
                "ResourceType": "Object",
                "ServiceCategory": "Storage",
                "ServiceSubcategory": "Object Storage",
                "ServiceName": "Amazon Simple Storage Service",
                "SkuId": "TimedStorage-ByteHrs",
                "x_RateSource": rate.source.value if rate else None,
                "x_RateCheckedOn": rate.checked_on.isoformat() if rate else None,
            }
        )
    return rows


def to_csv(rows: Iterable[dict[str, Any]]) -> str:
    """Every value quoted (an empty string is a null): types come from FOCUS_METADATA."""
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow([name for name, _, _ in COLUMNS])
    for row in rows:
        writer.writerow(["" if row.get(n) is None else str(row[n]) for n, _, _ in COLUMNS])
    return out.getvalue()


def check_rows(rows: Sequence[dict[str, str]]) -> list[str]:
    """FOCUS column rules our rows must meet (read back from CSV: every value a string)."""
    problems = []
    types = {name: kind for name, kind, _ in COLUMNS}
    for n, row in enumerate(rows):
        where = f"row {n + 1}"
        for column in MANDATORY:
            if not row.get(column):
                problems.append(f"{where}: {column} is mandatory and empty")
        for column, value in row.items():
            if not value:
                continue
            kind = types.get(column)
            if kind is None and not column.startswith("x_"):
                problems.append(f"{where}: {column} is neither a FOCUS nor an x_ column")
            if kind == "Decimal":
                try:
                    Decimal(value)
                except ArithmeticError:
                    problems.append(f"{where}: {column} is not a decimal: {value!r}")
            if kind == "DateTime":
                try:
                    datetime.strptime(value + "+0000", "%Y-%m-%dT%H:%M:%SZ%z")
                except ValueError:
                    problems.append(f"{where}: {column} is not an ISO 8601 UTC time: {value!r}")
            if kind == "JSON":
                try:
                    if not isinstance(json.loads(value), dict):
                        problems.append(f"{where}: {column} is not a JSON object")
                except ValueError:
                    problems.append(f"{where}: {column} is not JSON")
        for column in ("BilledCost", "EffectiveCost", "ListCost", "ContractedCost"):
            try:
                if Decimal(row.get(column) or "0") < 0:
                    problems.append(f"{where}: {column} is negative")
            except ArithmeticError:
                pass
        if row.get("ChargeCategory") not in CHARGE_CATEGORIES:
            problems.append(f"{where}: ChargeCategory {row.get('ChargeCategory')!r} not allowed")
        if row.get("ChargeClass") not in ("", None, "Correction"):
            problems.append(f"{where}: ChargeClass must be null or Correction")
        if row.get("ServiceCategory") not in SERVICE_CATEGORIES:
            problems.append(f"{where}: ServiceCategory {row.get('ServiceCategory')!r} unknown")
        if row.get("BillingCurrency") != "USD":
            problems.append(f"{where}: BillingCurrency must be an ISO 4217 code (USD)")
        try:
            cps, cpe = row["ChargePeriodStart"], row["ChargePeriodEnd"]
            bps, bpe = row["BillingPeriodStart"], row["BillingPeriodEnd"]
            if not (bps <= cps < cpe <= bpe):
                problems.append(f"{where}: ChargePeriod not inside BillingPeriod")
        except KeyError:
            pass
    return problems
