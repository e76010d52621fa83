"""The opt-in FOCUS 1.3 export, judged against the 1.3 specification's text for the
allocation columns (tests/focus_spec/allocation-columns-1.3.md, copied with its source)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from shared.reports.focus import COLUMN_NAMES, focus_row
from shared.reports.focus13 import (
    ALLOCATION_COLUMNS,
    COLUMN_NAMES_13,
    COLUMNS_13,
    FOCUS_METADATA_13,
    METHODS,
    allocated_rows,
    check_rows_13,
    focus_files_13,
    to_csv_13,
    to_parquet_13,
)
from tests.unit.focus_samples import every_kind

SPEC = (Path(__file__).parent.parent / "focus_spec" / "allocation-columns-1.3.md").read_text()


def spec_of(column: str) -> str:
    """The fixture's section of one column."""
    match = re.search(rf"^## {column}\n(.*?)(?=^## |\Z)", SPEC, re.S | re.M)
    assert match, column
    return match.group(1)


def rows() -> list[dict[str, Any]]:
    return allocated_rows(focus_row(c) for c in every_kind())


@pytest.mark.parametrize("column", [c[0] for c in ALLOCATION_COLUMNS])
def test_each_allocation_column_is_the_spec_s_1_3_column_with_its_type_and_nulls(
    column: str,
) -> None:
    text = spec_of(column)
    assert re.search(r"(Introduced \(version\)|Version Introduced) 1\.3", text)
    spec_type = re.search(r"\| Data type\s+\| (\w+)", text)
    allows_nulls = re.search(r"\| Allows nulls\s+\| (\w+)", text)
    assert spec_type and allows_nulls
    ours = {name: (kind, nullable) for name, kind, nullable in COLUMNS_13}
    assert ours[column] == (spec_type.group(1), allows_nulls.group(1) == "True")
    assert column in COLUMN_NAMES_13 and column not in COLUMN_NAMES


def test_every_row_is_an_allocated_charge_that_meets_the_spec_requirements() -> None:
    sample = rows()
    assert sample and check_rows_13(sample) == []
    for row in sample:
        assert list(row) == list(COLUMN_NAMES_13)
        # "AllocatedResourceId MUST NOT be null when a *charge* represents the allocated
        # portion"; the job is what each row is allocated to.
        assert "MUST NOT be null when a *charge* represents the allocated" in SPEC
        assert row["AllocatedResourceId"] == row["AllocatedResourceName"]  # "MAY duplicate"
        assert "MAY duplicate AllocatedResourceId" in spec_of("AllocatedResourceName")
        # "AllocatedMethodId MUST NOT be null when a *charge* is related to ... allocation",
        # and the method is documented ("MUST make reference to a single ... value").
        assert row["AllocatedMethodId"] in METHODS
        details = json.loads(row["AllocatedMethodDetails"])
        # Each origin charge goes wholly to one job: one row, ratio 1 ("MUST be equal to 1").
        assert "MUST be equal to 1 (100%)" in spec_of("AllocatedMethodDetails")
        assert [e["AllocatedRatio"] for e in details["Elements"]] == [1]
        # "AllocatedTags MUST NOT include resource tags already present in [Tags]".
        tags = json.loads(row["Tags"]) if row["Tags"] else {}
        assert not set(json.loads(row["AllocatedTags"])) & set(tags)
        # x_JobId is gone: FOCUS 1.3 has a column for the job.
        assert "x_JobId" not in row and all(
            c in FOCUS_METADATA_13["AllocatedMethods"] for c in [row["AllocatedMethodId"]]
        )


@pytest.mark.parametrize(
    ("change", "expected", "spec_words"),
    [
        ({"AllocatedResourceName": None}, "AllocatedResourceName must be null exactly",
         "MUST NOT be null when AllocatedResourceId is not null"),
        ({"AllocatedMethodId": None}, "AllocatedMethodId must not be null",
         "MUST NOT be null when a *charge* is related to"),
        ({"AllocatedMethodDetails": '{"Elements": [{"AllocatedRatio": 0.5}]}'}, "sum to 0.5",
         "MUST be equal to 1"),
        ({"AllocatedMethodDetails": '{"Elements": [{"AllocatedRatio": 1, "UsageQuantity": 2}]}'},
         "UsageUnit must be present", "must be present if Usage Quantity is provided"),
        ({"AllocatedMethodDetails": '{"Elements": [{"AllocatedRatio": 1}], "mine": 1}'},
         "neither FOCUS's nor x_PascalCase", 'prefixed with "x_" followed by PascalCase'),
        ({"AllocatedTags": '{"training-job": "x"}'}, "repeats Tags key",
         "MUST NOT include resource tags already present"),
        ({"AllocatedTags": '{"job": "x"}'}, "lacks the data generator's prefix",
         "MUST be prefixed with a predetermined, data generator-specified tag key prefix"),
        ({"AllocatedTags": '{"costtracker/x": 3}'}, "must be a string or true",
         "MUST have a corresponding true (boolean) value"),
        ({"AllocatedMethodId": ""}, "non-empty string or null", "StringHandling"),
    ],
)  # fmt: skip
def test_the_checks_catch_each_broken_requirement(
    change: dict[str, Any], expected: str, spec_words: str
) -> None:
    assert spec_words in SPEC
    row = rows()[0]
    assert expected in " ".join(check_rows_13([{**row, **change}]))


def test_the_1_3_files_are_typed_and_the_same_rows_give_the_same_bytes() -> None:
    sample = rows()
    data = to_parquet_13(sample)
    assert data == to_parquet_13(rows())
    table = pq.read_table(io.BytesIO(data))
    assert table.column_names == list(COLUMN_NAMES_13)
    assert table.schema.metadata[b"FocusVersion"] == b"1.3"
    back = table.to_pylist()
    assert check_rows_13(back) == []
    assert [r["AllocatedMethodId"] for r in back] == [r["AllocatedMethodId"] for r in sample]
    assert to_csv_13(sample).splitlines()[0].split(",") == list(COLUMN_NAMES_13)
    assert to_csv_13(sample) == to_csv_13(rows())


def test_both_files_at_once_are_the_files_one_by_one() -> None:
    assert focus_files_13(rows()) == (to_parquet_13(rows()), to_csv_13(rows()))
