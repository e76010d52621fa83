"""The standard-library Parquet reader against files pyarrow writes the ways AWS Data
Exports and Spark write them, and against our own writer's FOCUS files."""

from __future__ import annotations

import io
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from shared.reports.focus import COLUMN_NAMES, focus_row, to_parquet
from shared.reports.parquet_reader import ParquetReadError, read_columns, snappy_decompress
from tests.unit.focus_samples import every_kind

N = 1200
TABLE = pa.table(
    {
        "line_item_resource_id": ["i-1", None, "vol-2", "i-1"] * (N // 4),
        "start": pa.array([datetime(2026, 11, 1, tzinfo=UTC)] * N, pa.timestamp("ms", tz="UTC")),
        "ns": pa.array([datetime(2026, 11, 1, 5, tzinfo=UTC)] * N, pa.timestamp("ns", tz="UTC")),
        "cost": [1.25, 0.1, None, 3.0] * (N // 4),
        "dec": pa.array([Decimal("1.2345"), None, Decimal("-3.5"), Decimal(0)] * (N // 4),
                        pa.decimal128(20, 4)),
        "n": pa.array([1, 2, None, 4] * (N // 4), pa.int32()),
        "big": pa.array([1, 2, 3, 2**40] * (N // 4), pa.int64()),
        "flag": [True, False, None, True] * (N // 4),
        "day": pa.array([date(2026, 11, 1)] * N, pa.date32()),
        "resource_tags": pa.array([{"a": "b"}, {}, None, {"c": "d"}] * (N // 4),
                                  pa.map_(pa.string(), pa.string())),
        "after_map": ["x", "y", "z", "w"] * (N // 4),
    }
)  # fmt: skip
WANTED = [*TABLE.column_names, "not_in_file"]
EXPECTED = TABLE.drop(["resource_tags"]).to_pylist()


def written(table: pa.Table, **options: Any) -> bytes:
    out = io.BytesIO()
    pq.write_table(table, out, **options)
    return out.getvalue()


@pytest.mark.parametrize(
    "options",
    [
        {"compression": "snappy"},
        {"compression": "gzip"},
        {"compression": "none"},
        {"use_dictionary": False},
        {"data_page_version": "2.0"},
        {"data_page_version": "2.0", "compression": "snappy", "use_dictionary": False},
        {"row_group_size": 500, "data_page_size": 1000},
    ],
)
def test_flat_columns_read_as_pyarrow_reads_them_nested_ones_skipped(
    options: dict[str, Any],
) -> None:
    assert read_columns(written(TABLE, **options), WANTED) == EXPECTED


def test_spark_int96_timestamps() -> None:
    data = written(TABLE.select(["ns"]), use_deprecated_int96_timestamps=True)
    assert read_columns(data, ["ns"])[0] == {"ns": datetime(2026, 11, 1, 5, tzinfo=UTC)}


def test_our_focus_files_read_back_as_written() -> None:
    rows = [focus_row(c) for c in every_kind()]
    assert (
        read_columns(to_parquet(rows), COLUMN_NAMES)
        == pq.read_table(io.BytesIO(to_parquet(rows))).to_pylist()
    )


def test_snappy_copies_that_overlap_what_they_write() -> None:
    # "ab" literal, then a copy of 6 bytes at offset 2 (tag 0b000_010_01: length 6).
    assert snappy_decompress(bytes([8, 0b100, ord("a"), ord("b"), 0b00001001, 2])) == b"abababab"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"not parquet at all", "no PAR1 magic"),
        (written(TABLE.select(["n"]), compression="zstd"), "ZSTD compression is not supported"),
        (b"PAR1" + b"\x00" * 8 + b"\xff\x00\x00\x00PAR1", "unreadable footer"),
    ],
)
def test_what_it_cannot_read_is_one_line_naming_why(data: bytes, message: str) -> None:
    with pytest.raises(ParquetReadError, match=message):
        read_columns(data, ["n"])
