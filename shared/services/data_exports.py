"""Reconciliation by resource with AWS Data Exports (CUR 2.0), tags or no tags.

Cost Explorer by tag needs the job tag activated as a cost allocation tag and answers per
tag; the account's Data Exports (CUR 2.0, Parquet in S3) carry every line item with its
resource id, so each job's estimate can be set against the bill per resource and day, and
the charges the events cannot see (data transfer, CloudWatch, ...) on a job's resources
turn from "unconfirmed" into billed figures.

The module depends on no ledger internals: it takes per-resource, per-day estimates
(``ResourceEstimate``; ``estimates_from_focus_rows`` builds them from the FOCUS export) and
billed lines (``billed_lines`` maps CUR 2.0 rows), and returns plain dictionaries.

Resource ids: EC2 instances and EBS volumes are billed under their ids; S3 under the bucket
name, so a checkpoint object (``arn:aws:s3:::bucket/key``) is matched by its bucket, and a
bucket's bill is shared among the jobs that stored in it that day in proportion to their
estimates. A billed line on no estimated resource is reported as unallocated.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any, Protocol

from shared.reports.formatting import money
from shared.reports.parquet import ParquetError, read_columns

# CUR 2.0 columns read (Data Exports, "CUR 2.0" table).
CUR_COLUMNS = (
    "line_item_resource_id",
    "line_item_usage_start_date",
    "line_item_unblended_cost",
    "line_item_usage_type",
    "line_item_product_code",
    "line_item_line_item_type",
    "bill_invoice_id",
)
# Line item types that are usage of a resource (taxes, credits, fees, refunds are not).
USAGE_LINE_TYPES = {"Usage", "DiscountedUsage", "SavingsPlanCoveredUsage"}
# What the estimate covers; anything else on a job's resource is an unconfirmed item.
ESTIMATED_KINDS = (
    "instance",
    "capacity_reservation",
    "ebs_volume",
    "ebs_iops",
    "ebs_throughput",
    "checkpoint_storage",
)
UNCONFIRMED_KINDS = ("data_transfer", "cloudwatch", "other")


class DataExportError(ValueError):
    """A Data Exports file this module cannot read: one line that says why."""


@dataclass(frozen=True)
class ResourceEstimate:
    """Our estimate of one resource's cost to one job on one UTC day."""

    job_id: str
    day: date
    resource_id: str
    kind: str  # one of ESTIMATED_KINDS
    estimated_usd: Decimal


@dataclass(frozen=True)
class BilledLine:
    """One CUR line item, reduced to what reconciliation needs."""

    resource_id: str
    day: date
    usd: Decimal
    kind: str  # ESTIMATED_KINDS or UNCONFIRMED_KINDS, from the usage type and product
    usage_type: str
    final: bool  # the line is on an issued invoice


def billing_resource(resource_id: str) -> str:
    """The id the bill uses: an S3 object's bucket, otherwise the id itself."""
    if resource_id.startswith("arn:aws:s3:::"):
        return resource_id.removeprefix("arn:aws:s3:::").split("/", 1)[0]
    return resource_id


def line_kind(usage_type: str, product_code: str) -> str:
    """The part of a job's cost a CUR line is, from its usage type (region prefix aside)."""
    usage = usage_type.split("-", 1)[1] if _has_region_prefix(usage_type) else usage_type
    if product_code == "AWSDataTransfer" or "DataTransfer" in usage or "-Bytes" in usage:
        return "data_transfer"
    if product_code == "AmazonCloudWatch":
        return "cloudwatch"
    if usage.startswith(("BoxUsage", "SpotUsage", "DedicatedUsage", "HostUsage")):
        return "instance"
    if usage.startswith(("Reservation:", "UnusedBox", "ReservedCapacity")):
        return "capacity_reservation"
    if usage.startswith("EBS:VolumeUsage"):
        return "ebs_volume"
    if usage.startswith("EBS:VolumeP-IOPS"):
        return "ebs_iops"
    if usage.startswith("EBS:VolumeP-Throughput"):
        return "ebs_throughput"
    if usage.startswith("TimedStorage"):
        return "checkpoint_storage"
    return "other"


def _has_region_prefix(usage_type: str) -> bool:
    """``USE2-BoxUsage:...``: a region code of letters and a digit before the dash."""
    head, dash, _ = usage_type.partition("-")
    return bool(dash) and head.isupper() and head.isalnum() and any(c.isdigit() for c in head)


def _day(value: Any) -> date:
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC).date()
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        return _day(parsed)
    raise DataExportError(f"line_item_usage_start_date is not a time: {value!r}")


def _usd(value: Any) -> Decimal:
    if isinstance(value, bool) or value is None:
        raise DataExportError(f"line_item_unblended_cost is not a number: {value!r}")
    # Data Exports write costs as DOUBLE: its shortest repr is the exported figure.
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def billed_lines(rows: Iterable[Mapping[str, Any]], source: str = "rows") -> list[BilledLine]:
    """CUR 2.0 rows (mappings by column name; ``source`` names them in errors) as billed
    lines: usage lines with a resource id only (the rest cannot be matched to a resource)."""
    lines = []
    for n, row in enumerate(rows):
        missing = [c for c in CUR_COLUMNS[:5] if c not in row]
        if missing:
            raise DataExportError(
                f"{source} row {n + 1}: not a CUR 2.0 row, no {', '.join(missing)}"
            )
        resource = row["line_item_resource_id"]
        line_type = row.get("line_item_line_item_type") or "Usage"
        if not resource or line_type not in USAGE_LINE_TYPES:
            continue
        usage_type = str(row["line_item_usage_type"] or "")
        try:
            day, usd = (
                _day(row["line_item_usage_start_date"]),
                _usd(row["line_item_unblended_cost"]),
            )
        except (DataExportError, ArithmeticError, ValueError) as exc:
            raise DataExportError(f"{source} row {n + 1}: {exc}") from exc
        lines.append(
            BilledLine(
                resource_id=str(resource),
                day=day,
                usd=usd,
                kind=line_kind(usage_type, str(row["line_item_product_code"] or "")),
                usage_type=usage_type,
                final=bool(row.get("bill_invoice_id")),
            )
        )
    return lines


def rows_from_parquet(data: bytes, source: str) -> list[dict[str, Any]]:
    """The rows of the Data Exports Parquet file ``source`` (CUR columns only, read by
    pyarrow: ``shared.reports.parquet``); a file pyarrow cannot read is refused by name."""
    try:
        return read_columns(data, CUR_COLUMNS, source=source)
    except ParquetError as exc:
        raise DataExportError(str(exc)) from exc


class ExportFiles(Protocol):
    def period_files(self, period: str) -> Iterator[tuple[str, bytes]]: ...


class DataExports:
    """The billed lines of the configured export, one bill period at a time (its files:
    ``shared.adapters.data_exports.S3ExportFiles``). A period is read once per instance:
    AWS rewrites its files whole, several times a day."""

    def __init__(self, files: ExportFiles) -> None:
        self._files = files
        self._periods: dict[str, list[BilledLine]] = {}

    def lines(self, day: date) -> list[BilledLine]:
        """The billed lines of ``day`` (from its month's files)."""
        period = f"{day:%Y-%m}"
        if period not in self._periods:
            lines: list[BilledLine] = []
            for source, body in self._files.period_files(period):
                lines += billed_lines(rows_from_parquet(body, source), source)
            self._periods[period] = lines
        return [line for line in self._periods[period] if line.day == day]


def estimates_from_focus_rows(rows: Iterable[Mapping[str, Any]]) -> list[ResourceEstimate]:
    """Per-resource, per-day estimates from our FOCUS rows (typed, as exported)."""
    out = []
    for row in rows:
        if not row.get("ResourceId"):
            continue
        out.append(
            ResourceEstimate(
                job_id=str(row.get("x_JobId") or row["AllocatedResourceId"]),  # 1.2 or 1.3
                day=_day(row["ChargePeriodStart"]),
                resource_id=str(row["ResourceId"]),
                kind=str(row["x_ChargeKind"]),
                estimated_usd=Decimal(row["EffectiveCost"]),
            )
        )
    return out


def reconcile_resources(
    estimates: Sequence[ResourceEstimate], lines: Sequence[BilledLine]
) -> dict[str, Any]:
    """Each job and day: estimated vs billed per resource, the difference, and the billed
    items the estimate does not cover; ``confirmed`` once every line of the day is invoiced."""
    # Who estimated what on each billing resource and day: the shares of a shared bill.
    claims: dict[tuple[str, date], dict[str, Decimal]] = {}
    per_resource: dict[tuple[str, date, str], dict[str, Any]] = {}
    for e in estimates:
        key = (billing_resource(e.resource_id), e.day)
        jobs = claims.setdefault(key, {})
        jobs[e.job_id] = jobs.get(e.job_id, Decimal(0)) + e.estimated_usd
        entry = per_resource.setdefault(
            (e.job_id, e.day, billing_resource(e.resource_id)),
            {"kinds": set(), "estimated": Decimal(0), "ids": set()},
        )
        entry["kinds"].add(e.kind)
        entry["ids"].add(e.resource_id)
        entry["estimated"] += e.estimated_usd
    billed: dict[tuple[str, date, str], dict[str, Decimal]] = {}
    final_days: dict[date, bool] = {}
    unallocated: dict[date, dict[str, Decimal]] = {}
    for line in lines:
        final_days[line.day] = final_days.get(line.day, True) and line.final
        shares = claims.get((line.resource_id, line.day))
        if not shares:
            day_bucket = unallocated.setdefault(line.day, {})
            day_bucket[line.resource_id] = day_bucket.get(line.resource_id, Decimal(0)) + line.usd
            continue
        weight = sum(shares.values(), Decimal(0))
        for job, share in shares.items():
            part = line.usd * share / weight if weight else line.usd / len(shares)
            kinds = billed.setdefault((job, line.day, line.resource_id), {})
            kinds[line.kind] = kinds.get(line.kind, Decimal(0)) + part
    days: dict[tuple[str, date], dict[str, Any]] = {}
    for (job, day, resource), entry in sorted(per_resource.items()):
        bill = billed.get((job, day, resource), {})
        confirmed = sum((bill.get(k, Decimal(0)) for k in ESTIMATED_KINDS), Decimal(0))
        result = days.setdefault(
            (job, day),
            {
                "job_id": job,
                "date": day.isoformat(),
                "estimated": Decimal(0),
                "billed": Decimal(0),
                "unconfirmed": dict.fromkeys(UNCONFIRMED_KINDS, Decimal(0)),
                "resources": [],
            },
        )
        result["estimated"] += entry["estimated"]
        result["billed"] += confirmed
        for kind in UNCONFIRMED_KINDS:
            result["unconfirmed"][kind] += bill.get(kind, Decimal(0))
        result["resources"].append(
            {
                "resource_id": resource,
                "estimated_ids": sorted(entry["ids"]),
                "kinds": sorted(entry["kinds"]),
                "estimated_usd": money(entry["estimated"]),
                "billed_usd": money(confirmed),
                "difference_usd": money(entry["estimated"] - confirmed),
                "unconfirmed_billed_usd": {
                    k: money(bill[k]) for k in UNCONFIRMED_KINDS if k in bill
                },
            }
        )
    jobs_out = []
    for (_, day), result in sorted(days.items()):
        billed_day = day in final_days
        estimated, confirmed = result.pop("estimated"), result.pop("billed")
        unconfirmed = result.pop("unconfirmed")
        jobs_out.append(
            {
                **result,
                "status": "confirmed" if billed_day and final_days[day] else "estimated",
                "estimated_usd": money(estimated),
                "billed_usd": money(confirmed),
                "difference_usd": money(estimated - confirmed),
                "unconfirmed_billed_usd": {k: money(v) for k, v in unconfirmed.items()},
            }
        )
    return {
        "jobs": jobs_out,
        "unallocated": [
            {"date": day.isoformat(), "resource_id": resource, "billed_usd": money(usd)}
            for day, resources in sorted(unallocated.items())
            for resource, usd in sorted(resources.items())
        ],
    }
