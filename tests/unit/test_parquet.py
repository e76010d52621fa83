"""The pure-Python Parquet writer, read back by pyarrow (a test-only dependency)."""

from __future__ import annotations

import io
import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from shared.reports.parquet import Column, ParquetError, write_parquet

COLUMNS = (
    Column("name", "string"),
    Column("cost", "decimal", nullable=False),
    Column("quantity", "decimal", scale=16),
    Column("at", "timestamp"),
    Column("estimated", "boolean", nullable=False),
    Column("ratio", "double"),
    Column("count", "int64"),
)
ROWS: list[dict[str, Any]] = [
    {"name": "i-0a1a", "cost": Decimal("322.5"), "quantity": Decimal(15), "estimated": True,
     "at": datetime(2026, 11, 1, tzinfo=UTC), "ratio": 0.5, "count": 3},
    {"name": None, "cost": Decimal("-0.0000000001"), "quantity": None, "estimated": False,
     "at": None, "ratio": None, "count": None},
    {"name": "Zoë, \"quoted\"", "cost": Decimal("99999999999.9999999999"),
     "quantity": Decimal(1) / 3, "estimated": True,
     "at": datetime(2026, 11, 1, 2, 0, 0, 123456, tzinfo=timezone(timedelta(hours=2))),
     "ratio": -1e-5, "count": -(2**40)},
]  # fmt: skip


def read(data: bytes) -> pa.Table:
    return pq.read_table(io.BytesIO(data))


@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_types_values_and_nulls_read_back(compression: Any) -> None:
    rows = ROWS * 7  # longer runs of definition levels
    table = read(write_parquet(COLUMNS, rows, compression=compression))
    assert table.schema.field("name").type == pa.string()
    assert table.schema.field("cost").type == pa.decimal128(38, 10)
    assert not table.schema.field("cost").nullable
    assert table.schema.field("quantity").type == pa.decimal128(38, 16)
    assert table.schema.field("at").type == pa.timestamp("us", tz="UTC")
    assert table.schema.field("estimated").type == pa.bool_()
    assert table.schema.field("ratio").type == pa.float64()
    assert table.schema.field("count").type == pa.int64()
    back = table.to_pylist()
    assert len(back) == len(rows)
    for got, sent in zip(back, rows, strict=True):
        assert got["name"] == sent["name"]
        assert got["cost"] == sent["cost"]
        assert got["estimated"] is sent["estimated"]
        assert got["ratio"] == sent["ratio"]
        assert got["count"] == sent["count"]
        if sent["quantity"] is None:
            assert got["quantity"] is None
        else:
            assert abs(got["quantity"] - sent["quantity"]) < Decimal("1e-16")
        if sent["at"] is None:
            assert got["at"] is None
        else:
            assert got["at"] == sent["at"]
            assert got["at"].utcoffset() == timedelta(0)
    assert table.column("name").null_count == 7


def test_same_rows_same_bytes_and_metadata_kept() -> None:
    one = write_parquet(COLUMNS, ROWS, metadata={"FocusVersion": "1.2"})
    assert one == write_parquet(COLUMNS, ROWS, metadata={"FocusVersion": "1.2"})
    assert one[:4] == b"PAR1" and one[-4:] == b"PAR1"
    assert pq.read_schema(io.BytesIO(one)).metadata == {b"FocusVersion": b"1.2"}


def test_no_rows_is_a_valid_empty_file() -> None:
    table = read(write_parquet(COLUMNS, []))
    assert table.num_rows == 0
    assert table.schema.names == [c.name for c in COLUMNS]


def test_many_columns_use_the_long_list_header() -> None:
    columns = [Column(f"c{n}", "string") for n in range(40)]
    table = read(write_parquet(columns, [{f"c{n}": str(n) for n in range(40)}]))
    assert table.to_pylist()[0]["c39"] == "39"


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"cost": None, "estimated": True}, "a null in a column"),
        ({"cost": Decimal("1e30"), "estimated": True}, "does not fit DECIMAL"),
        ({"cost": Decimal("1e300"), "estimated": True}, "does not fit DECIMAL"),
        ({"cost": Decimal("9" * 28) + Decimal("0.99999999999"), "estimated": True}, "not fit"),
        ({"cost": 1.5, "estimated": True}, "is not a decimal"),
        ({"cost": Decimal("NaN"), "estimated": True}, "finite"),
        ({"cost": Decimal(1), "estimated": "yes"}, "not a boolean"),
        ({"cost": Decimal(1), "estimated": True, "name": 5}, "not a string"),
        ({"cost": Decimal(1), "estimated": True, "at": datetime(2026, 1, 1)}, "timezone"),  # noqa: DTZ001
        ({"cost": Decimal(1), "estimated": True, "count": True}, "not an integer"),
    ],
)
def test_a_value_that_does_not_fit_its_column_is_refused(row: dict[str, Any], message: str) -> None:
    with pytest.raises(ParquetError, match=message):
        write_parquet(COLUMNS, [row])


def test_the_writer_imports_without_pyarrow_and_quickly() -> None:
    """What a Lambda pays: the writer alone, standard library only (figure in README)."""
    code = (
        "import sys, time; t = time.perf_counter(); import shared.reports.parquet; "
        "print(time.perf_counter() - t); "
        "assert not any(m.startswith(('pyarrow', 'numpy')) for m in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert float(out.stdout) < 0.5  # measured ~3 ms; generous for a loaded CI machine
