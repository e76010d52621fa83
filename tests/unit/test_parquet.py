"""Parquet through pyarrow (``shared.reports.parquet``): the writer's types, rounding,
nulls and refusals, read back by pyarrow; the reader against files written the ways AWS
Data Exports and Spark write them, and its one-line refusals naming the file."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from shared.reports.parquet import Column, ParquetError, read_columns, write_parquet

COLUMNS = (
    Column("name", "string"),
    Column("cost", "decimal", nullable=False),
    Column("quantity", "decimal", scale=16),
    Column("at", "timestamp"),
    Column("estimated", "boolean", nullable=False),
)
ROWS: list[dict[str, Any]] = [
    {"name": "i-0a1a", "cost": Decimal("322.5"), "quantity": Decimal(15), "estimated": True,
     "at": datetime(2026, 11, 1, tzinfo=UTC)},
    {"name": None, "cost": Decimal("-0.0000000001"), "quantity": None, "estimated": False,
     "at": None},
    {"name": "Zoë, \"quoted\"", "cost": Decimal("99999999999.9999999999"),
     "quantity": Decimal(1) / 3, "estimated": True,
     "at": datetime(2026, 11, 1, 2, 0, 0, 123456, tzinfo=timezone(timedelta(hours=2)))},
]  # fmt: skip


def read(data: bytes) -> pa.Table:
    return pq.read_table(io.BytesIO(data))


def test_types_values_and_nulls_read_back() -> None:
    rows = ROWS * 7
    table = read(write_parquet(COLUMNS, rows))
    assert table.schema.field("name").type == pa.string()
    assert table.schema.field("cost").type == pa.decimal128(38, 10)
    assert not table.schema.field("cost").nullable
    assert not table.schema.field("estimated").nullable
    assert table.schema.field("quantity").type == pa.decimal128(38, 16)
    assert table.schema.field("at").type == pa.timestamp("us", tz="UTC")
    assert table.schema.field("estimated").type == pa.bool_()
    back = table.to_pylist()
    assert len(back) == len(rows)
    for got, sent in zip(back, rows, strict=True):
        assert got["name"] == sent["name"]
        assert got["cost"] == sent["cost"]
        assert got["estimated"] is sent["estimated"]
        assert got["at"] == sent["at"]
    assert back[2]["quantity"] == Decimal("0.3333333333333333")  # 1/3 at scale 16
    assert back[2]["at"].utcoffset() == timedelta(0)
    assert table.column("name").null_count == 7


def test_the_physical_types_are_parquets_own() -> None:
    """DECIMAL(38, s) as 16-byte fixed-length, TIMESTAMP(MICROS, UTC): what any reader
    takes without an Arrow schema (none is stored)."""
    meta = pq.ParquetFile(io.BytesIO(write_parquet(COLUMNS, ROWS))).metadata
    cost, at = meta.schema.column(1), meta.schema.column(3)
    assert (cost.physical_type, cost.length, cost.precision, cost.scale) == (
        "FIXED_LEN_BYTE_ARRAY", 16, 38, 10
    )  # fmt: skip
    assert at.physical_type == "INT64"
    logical = json.loads(at.logical_type.to_json())
    assert (logical["Type"], logical["isAdjustedToUTC"], logical["timeUnit"]) == (
        "Timestamp", True, "microseconds"
    )  # fmt: skip
    assert meta.row_group(0).column(0).compression == "SNAPPY"


def test_decimals_round_half_even_at_the_columns_scale() -> None:
    rows = [
        {"cost": Decimal("0.00000000005"), "estimated": True},  # half: to the even 0
        {"cost": Decimal("0.00000000015"), "estimated": True},  # half: to the even 2
        {"cost": Decimal("-1.23456789016"), "estimated": True},
        {"cost": 7, "estimated": True},
        {"cost": "2.5", "estimated": True},
    ]
    costs = [r["cost"] for r in read(write_parquet(COLUMNS, rows)).to_pylist()]
    assert costs == [Decimal(0), Decimal("2E-10"), Decimal("-1.2345678902"), 7, Decimal("2.5")]


def test_same_rows_same_bytes_and_metadata_kept() -> None:
    one = write_parquet(COLUMNS, ROWS, metadata={"FocusVersion": "1.2", "DataGenerator": "x"})
    assert one == write_parquet(
        COLUMNS, ROWS, metadata={"DataGenerator": "x", "FocusVersion": "1.2"}
    )
    assert one[:4] == b"PAR1" and one[-4:] == b"PAR1"
    assert pq.read_schema(io.BytesIO(one)).metadata == {
        b"DataGenerator": b"x",
        b"FocusVersion": b"1.2",
    }


def test_no_rows_is_a_valid_empty_file() -> None:
    table = read(write_parquet(COLUMNS, []))
    assert table.num_rows == 0
    assert table.schema.names == [c.name for c in COLUMNS]


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"cost": None, "estimated": True}, "cost: a null in a column that allows none"),
        ({"cost": Decimal(1)}, "estimated: a null in a column"),
        ({"cost": Decimal("1e30"), "estimated": True}, "cost: .* does not fit DECIMAL"),
        ({"cost": Decimal("1e300"), "estimated": True}, "does not fit DECIMAL"),
        ({"cost": Decimal("9" * 28) + Decimal("0.99999999999"), "estimated": True}, "not fit"),
        ({"cost": 1.5, "estimated": True}, "cost: 1.5 is not a decimal"),
        ({"cost": True, "estimated": True}, "is not a decimal"),
        ({"cost": "1,5", "estimated": True}, "is not a decimal"),
        ({"cost": Decimal("NaN"), "estimated": True}, "finite"),
        ({"cost": Decimal(1), "estimated": "yes"}, "estimated: .*convert 'yes'"),
        ({"cost": Decimal(1), "estimated": 1}, "estimated: .*convert 1"),
        ({"cost": Decimal(1), "estimated": True, "name": 5}, "name: 5 is not a string"),
        ({"cost": Decimal(1), "estimated": True, "name": b"x"}, "is not a string"),
        ({"cost": Decimal(1), "estimated": True, "at": datetime(2026, 1, 1)}, "timezone"),  # noqa: DTZ001
        ({"cost": Decimal(1), "estimated": True, "at": "2026-01-01"}, "at: .*timezone"),
    ],
)
def test_a_value_that_does_not_fit_its_column_is_refused(row: dict[str, Any], message: str) -> None:
    with pytest.raises(ParquetError, match=message):
        write_parquet(COLUMNS, [row])


def test_column_names_are_unique() -> None:
    with pytest.raises(ParquetError, match="unique"):
        write_parquet([Column("a", "string"), Column("a", "boolean")], [])


def test_it_needs_no_numpy() -> None:
    """The Lambda layer carries pyarrow alone: writing and reading work with numpy barred,
    and the interpreter exits cleanly after them (pyarrow 20 can abort at exit after a
    threaded read: docs/parquet.md)."""
    code = (
        "import sys; sys.modules['numpy'] = None\n"
        "from decimal import Decimal\n"
        "from shared.reports.parquet import Column, read_columns, write_parquet\n"
        "data = write_parquet([Column('c', 'decimal')], [{'c': Decimal('1.5')}])\n"
        "assert read_columns(data, ['c'], source='x') == [{'c': Decimal('1.5000000000')}]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, timeout=120)


# ----------------------------------------------------------------------------- reading
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
        "flag": [True, False, None, True] * (N // 4),
        "day": pa.array([date(2026, 11, 1)] * N, pa.date32()),
        "resource_tags": pa.array([{"a": "b"}, {}, None, {"c": "d"}] * (N // 4),
                                  pa.map_(pa.string(), pa.string())),
    }
)  # fmt: skip
WANTED = [c for c in TABLE.column_names if c != "resource_tags"] + ["not_in_file"]
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
        {"compression": "zstd"},
        {"compression": "none", "use_dictionary": False},
        {"data_page_version": "2.0"},
        {"row_group_size": 500, "data_page_size": 1000},
    ],
)
def test_the_wanted_columns_read_as_written_others_left_out(options: dict[str, Any]) -> None:
    assert read_columns(written(TABLE, **options), WANTED, source="f") == EXPECTED


def test_spark_int96_timestamps_read_as_datetimes() -> None:
    data = written(TABLE.select(["ns"]), use_deprecated_int96_timestamps=True)
    (row, *_) = read_columns(data, ["ns"], source="f")
    assert row["ns"].replace(tzinfo=UTC) == datetime(2026, 11, 1, 5, tzinfo=UTC)


def test_nanoseconds_are_cut_to_microseconds() -> None:
    table = pa.table({"t": pa.array([1_000_000_001_999], pa.timestamp("ns", tz="UTC"))})
    assert read_columns(written(table), ["t"], source="f") == [
        {"t": datetime(1970, 1, 1, 0, 16, 40, 1, tzinfo=UTC)}
    ]


def test_a_file_without_the_wanted_columns_gives_its_rows_empty() -> None:
    assert read_columns(written(TABLE.select(["n"]).slice(0, 3)), ["x"], source="f") == [{}] * 3


@pytest.mark.parametrize(
    "data",
    [
        b"not parquet at all",
        b"PAR1 truncated",
        written(TABLE.select(["n"]))[:-20],
        written(TABLE.select(["n"]))[:100] + b"\x00" * 50 + written(TABLE.select(["n"]))[150:],
    ],
    ids=["not-parquet", "truncated-magic", "truncated-footer", "corrupt-pages"],
)
def test_what_it_cannot_read_is_one_line_naming_the_file(data: bytes) -> None:
    with pytest.raises(ParquetError, match=r"^s3://b/k\.parquet: not a readable Parquet file") as e:
        read_columns(data, ["n"], source="s3://b/k.parquet")
    assert "\n" not in str(e.value)
