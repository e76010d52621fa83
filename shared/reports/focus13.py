"""The opt-in FOCUS 1.3 export: the 1.2 rows plus the allocation columns, which state
how each row was allocated to its job.

The product splits the account's cost by job: every charge (an instance at a rate on a
day, a volume, a checkpoint object) goes wholly to one job, by one documented method
(``METHODS``). In FOCUS 1.3 terms each row is an allocated charge with
``AllocatedRatio`` 1: ``AllocatedResourceId`` (and ``AllocatedResourceName``: no other
display name) is the job, ``AllocatedMethodId`` the method,
``AllocatedMethodDetails`` the ratio and the usage it was measured by, and
``AllocatedTags`` the data generator's own tag (``costtracker/job``; the job's tags
are already in ``Tags``, which 1.3 forbids repeating). ``x_JobId`` goes (the job is
``AllocatedResourceId`` now); the other ``x_`` columns stay: FOCUS has no column for
them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from shared.reports.focus import (
    COLUMNS,
    MONEY_SCALE,
    QUANTITY_SCALE,
    ColumnType,
    csv_of,
    files_of,
    values_of,
)
from shared.reports.focus_checks import check_rows
from shared.reports.parquet import Column, write_parquet_columns

FOCUS_VERSION = "1.3"
VERSIONS = ("1.2", "1.3")
TAG_PREFIX = "costtracker/"  # the data generator's tag scheme (AllocatedTags)
ALLOCATION_COLUMNS: tuple[tuple[str, ColumnType, bool], ...] = (
    ("AllocatedMethodDetails", "JSON", True),
    ("AllocatedMethodId", "String", True),
    ("AllocatedResourceId", "String", True),
    ("AllocatedResourceName", "String", True),
    ("AllocatedTags", "JSON", True),
)
REPLACED = ("x_JobId",)  # AllocatedResourceId carries the job
COLUMNS_13: tuple[tuple[str, ColumnType, bool], ...] = (
    *sorted([c for c in COLUMNS if not c[0].startswith("x_")] + list(ALLOCATION_COLUMNS)),
    *(c for c in COLUMNS if c[0].startswith("x_") and c[0] not in REPLACED),
)
COLUMN_NAMES_13 = tuple(name for name, _, _ in COLUMNS_13)

# How a charge of each kind finds its job (AllocatedMethodId -> what it means). A kind
# not listed here gets JobOfResource.
METHODS: dict[str, str] = {
    "costtracker/JobTag": "an instance (or its capacity) carrying the job tag",
    "costtracker/UntaggedInstance": "an instance with no job tag: its own job untagged:<id>",
    "costtracker/AttachedVolume": "an EBS volume: the job of the instance it is attached to",
    "costtracker/CheckpointKey": "an S3 object whose key matches checkpoint.key_pattern's job",
    "costtracker/JobOfResource": "a resource the ledger recorded under the job",
}
_KIND_METHOD = {
    "instance": "costtracker/JobTag",
    "capacity_reservation": "costtracker/JobTag",
    "ebs_volume": "costtracker/AttachedVolume",
    "ebs_iops": "costtracker/AttachedVolume",
    "ebs_throughput": "costtracker/AttachedVolume",
    "checkpoint_storage": "costtracker/CheckpointKey",
}


def method_of(kind: str, job_id: str) -> str:
    if job_id.startswith("untagged:") and kind in ("instance", "capacity_reservation"):
        return "costtracker/UntaggedInstance"
    return _KIND_METHOD.get(kind, "costtracker/JobOfResource")


def _number(value: Decimal) -> int | float:
    return int(value) if value == value.to_integral_value() else float(value)


def allocated_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A 1.2 row (``shared.reports.focus.focus_row``) as its 1.3 row."""
    job, kind = str(row["x_JobId"]), str(row["x_ChargeKind"])
    element: dict[str, Any] = {"AllocatedRatio": 1}
    if row.get("ConsumedQuantity") is not None and row.get("ConsumedUnit"):
        element["UsageUnit"] = row["ConsumedUnit"]
        element["UsageQuantity"] = _number(Decimal(row["ConsumedQuantity"]))
    details = {"Elements": [element]}
    out = {k: v for k, v in row.items() if k not in REPLACED}
    out.update(
        AllocatedMethodDetails=json.dumps(details, sort_keys=True),
        AllocatedMethodId=method_of(kind, job),
        AllocatedResourceId=job,
        AllocatedResourceName=job,
        AllocatedTags=json.dumps({f"{TAG_PREFIX}job": job}, sort_keys=True),
    )
    return {name: out.get(name) for name in COLUMN_NAMES_13}


def allocated_rows(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [allocated_row(r) for r in rows]


PARQUET_COLUMNS_13 = tuple(
    Column(
        name,
        {"Decimal": "decimal", "Quantity": "decimal", "DateTime": "timestamp", "Boolean": "boolean"}
        .get(kind, "string"),  # type: ignore[arg-type]
        nullable,
        scale=QUANTITY_SCALE if kind == "Quantity" else MONEY_SCALE,
    )
    for name, kind, nullable in COLUMNS_13
)  # fmt: skip
FOCUS_METADATA_13 = {
    "FocusVersion": FOCUS_VERSION,
    "DataGenerator": "costtracker",
    "AllocatedMethods": METHODS,
    "Columns": [
        {"ColumnName": n, "DataType": "Decimal" if t == "Quantity" else t, "Nullable": nl}
        for n, t, nl in COLUMNS_13
    ],
}


PARQUET_METADATA_13 = {"FocusVersion": FOCUS_VERSION, "DataGenerator": "costtracker"}


def to_csv_13(rows: Iterable[Mapping[str, Any]]) -> str:
    return csv_of(COLUMNS_13, values_of(rows, COLUMN_NAMES_13))


def to_parquet_13(rows: Sequence[Mapping[str, Any]]) -> bytes:
    return write_parquet_columns(
        PARQUET_COLUMNS_13, values_of(rows, COLUMN_NAMES_13), metadata=PARQUET_METADATA_13
    )


def focus_files_13(rows: Sequence[Mapping[str, Any]]) -> tuple[bytes, str]:
    """``to_parquet_13`` and ``to_csv_13`` of the rows, their columns read once for both."""
    return files_of(rows, COLUMNS_13, PARQUET_COLUMNS_13, PARQUET_METADATA_13)


_CUSTOM_KEY = re.compile(r"^x_[A-Z][A-Za-z0-9]*$")


def check_rows_13(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The 1.2 checks on each row's 1.2 part, and the 1.3 allocation columns' rules."""
    problems: list[str] = []
    as_12 = []
    for n, row in enumerate(rows):
        base = {
            k: v for k, v in row.items() if k not in dict.fromkeys(c[0] for c in ALLOCATION_COLUMNS)
        }
        base["x_JobId"] = row.get("AllocatedResourceId")
        as_12.append(base)
        problems += [f"row {n}: {p}" for p in _check_allocation(row)]
    missing = [c for c in COLUMN_NAMES_13 if rows and c not in rows[0]]
    problems += [f"missing column {c}" for c in missing]
    return check_rows(as_12) + problems


def _check_allocation(row: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    for name, _, _ in ALLOCATION_COLUMNS:
        value = row.get(name)
        if value is not None and (not isinstance(value, str) or not value):
            out.append(f"{name} must be a non-empty string or null")
    rid, rname, method = (row.get(k) for k in ("AllocatedResourceId", "AllocatedResourceName",
                                               "AllocatedMethodId"))  # fmt: skip
    if (rid is None) != (rname is None):
        out.append("AllocatedResourceName must be null exactly when AllocatedResourceId is")
    if rid is not None and method is None:
        out.append("AllocatedMethodId must not be null on an allocated charge")
    if method is not None and method not in METHODS:
        out.append(f"AllocatedMethodId {method!r} is not a documented method")
    details = row.get("AllocatedMethodDetails")
    if details is not None:
        out += _check_details(json.loads(details))
    tags = row.get("AllocatedTags")
    if tags is not None:
        allocated = json.loads(tags)
        own = json.loads(row["Tags"]) if row.get("Tags") else {}
        if not isinstance(allocated, dict):
            out.append("AllocatedTags must be a JSON object")
        else:
            out += [f"AllocatedTags repeats Tags key {k!r}" for k in allocated if k in own]
            out += [
                f"AllocatedTags key {k!r} lacks the data generator's prefix"
                for k in allocated
                if not k.startswith(TAG_PREFIX)
            ]
            out += [
                f"AllocatedTags {k!r}: value must be a string or true"
                for k, v in allocated.items()
                if not (isinstance(v, str) or v is True)
            ]
    return out


def _check_details(details: Any) -> list[str]:
    if not isinstance(details, dict) or not isinstance(details.get("Elements"), list):
        return ["AllocatedMethodDetails must be an object with an Elements array"]
    out = [f"AllocatedMethodDetails key {k!r} is neither FOCUS's nor x_PascalCase"
           for k in details if k != "Elements" and not _CUSTOM_KEY.match(k)]  # fmt: skip
    total = Decimal(0)
    for element in details["Elements"]:
        ratio = element.get("AllocatedRatio") if isinstance(element, dict) else None
        if not isinstance(ratio, int | float) or isinstance(ratio, bool):
            out.append("AllocatedMethodDetails: every element needs a numeric AllocatedRatio")
            continue
        total += Decimal(str(ratio))
        if "UsageQuantity" in element and not isinstance(element.get("UsageUnit"), str):
            out.append("AllocatedMethodDetails: UsageUnit must be present with UsageQuantity")
    if total != 1:
        out.append(f"AllocatedMethodDetails: the ratios of one charge sum to {total}, not 1")
    return out
