"""Every Parquet file the product writes, read back whole by pyarrow (docs/parquet.md): each
daily FOCUS 1.2 file of the two packaged examples (``llama-lora-vs-p5``, and
``seoul-fsx-month-end`` with finance days and FSx rows) and each FOCUS 1.3 file of a
replay. Each has the FOCUS columns in order with their Parquet types (DECIMAL(38, 10) for
money, DECIMAL(38, 16) for quantities, TIMESTAMP UTC, STRING, BOOLEAN; non-null where
FOCUS says so), the FOCUS metadata, and the product's reader (``read_columns``) gives the
same rows as pyarrow's own ``read_table``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from costtracker.cli import main
from costtracker.replay import replay
from costtracker.scenario import Scenario
from shared.reports.focus import COLUMNS, ColumnType
from shared.reports.focus13 import COLUMNS_13
from shared.reports.parquet import read_columns

EXAMPLES = ("llama-lora-vs-p5", "seoul-fsx-month-end")
THREE_DAYS = Path(__file__).parent.parent / "scenarios" / "three_days.json"
ARROW_TYPE: dict[ColumnType, pa.DataType] = {
    "Decimal": pa.decimal128(38, 10),
    "Quantity": pa.decimal128(38, 16),
    "DateTime": pa.timestamp("us", tz="UTC"),
    "String": pa.string(),
    "JSON": pa.string(),
    "Boolean": pa.bool_(),
}


def example(name: str) -> Scenario:
    text = resources.files("costtracker").joinpath(f"examples/{name}.json").read_text()
    return Scenario.model_validate(json.loads(text))


def read_back(path: Path, columns: Sequence[tuple[str, ColumnType, bool]], version: str) -> int:
    """pyarrow reads the whole file with the FOCUS schema; the product's reader gives the
    same rows. The file's row count."""
    table = pq.read_table(path)
    expected = pa.schema(
        [pa.field(name, ARROW_TYPE[kind], nullable=nullable) for name, kind, nullable in columns]
    )
    assert table.schema.remove_metadata() == expected, path
    assert table.schema.metadata == {
        b"DataGenerator": b"costtracker",
        b"FocusVersion": version.encode(),
    }
    theirs = table.to_pylist()
    assert read_columns(path.read_bytes(), table.column_names, source=str(path)) == theirs
    return table.num_rows


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_daily_focus_file_of_an_example_reads_back_with_pyarrow(
    name: str, tmp_path: Path
) -> None:
    document = replay(example(name), focus_dir=tmp_path)
    files = sorted(tmp_path.glob("focus/*/*/*/focus-1.2.parquet"))
    assert len(files) == len(document["daily_summaries"])
    rows = [read_back(f, COLUMNS, "1.2") for f in files]
    assert all(rows)  # no day without a row in these examples


def test_every_focus_1_3_file_reads_back_with_pyarrow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["replay", str(THREE_DAYS), "--json", "--focus-dir", str(tmp_path)]
    assert main([*argv, "--focus-version", "1.3"]) == 0
    capsys.readouterr()
    files = sorted(tmp_path.glob("focus/*/*/*/focus-1.3.parquet"))
    assert files
    assert all(read_back(f, COLUMNS_13, "1.3") for f in files)
