"""Every Parquet file the product writes, read back by pyarrow, and the hand-written
reader against files pyarrow writes (docs/parquet.md): the two packaged examples' daily
FOCUS 1.2 exports and a FOCUS 1.3 one, each file whole; pyarrow's own output in each
codec and page version the reader claims, and a clear refusal of what it does not."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from costtracker.cli import main
from costtracker.replay import replay
from costtracker.scenario import Scenario
from shared.reports.focus import COLUMN_NAMES
from shared.reports.focus13 import COLUMN_NAMES_13
from shared.reports.parquet_reader import ParquetReadError, read_columns

EXAMPLES = ("llama-lora-vs-p5", "seoul-fsx-month-end")
THREE_DAYS = Path(__file__).parent.parent / "scenarios" / "three_days.json"


def example(name: str) -> Scenario:
    text = resources.files("costtracker").joinpath(f"examples/{name}.json").read_text()
    return Scenario.model_validate(json.loads(text))


def same_as_pyarrow(path: Path, columns: tuple[str, ...]) -> int:
    """pyarrow reads the whole file; the hand reader gives the same rows. Row count."""
    table = pq.read_table(path)
    assert table.column_names == list(columns)
    ours = read_columns(path.read_bytes(), columns)
    theirs = table.to_pylist()
    assert ours == theirs, path
    return table.num_rows


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_daily_focus_file_of_an_example_reads_back_with_pyarrow(
    name: str, tmp_path: Path
) -> None:
    document = replay(example(name), focus_dir=tmp_path)
    files = sorted(tmp_path.glob("focus/*/*/*/focus-1.2.parquet"))
    assert len(files) == len(document["daily_summaries"])
    rows = [same_as_pyarrow(f, COLUMN_NAMES) for f in files]
    assert all(rows)  # no day without a row in these examples


def test_every_focus_1_3_file_reads_back_with_pyarrow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["replay", str(THREE_DAYS), "--json", "--focus-dir", str(tmp_path)]
    assert main([*argv, "--focus-version", "1.3"]) == 0
    capsys.readouterr()
    files = sorted(tmp_path.glob("focus/*/*/*/focus-1.3.parquet"))
    assert files
    assert all(same_as_pyarrow(f, COLUMN_NAMES_13) for f in files)


TABLE = pa.table(
    {
        "line_item_resource_id": ["i-0a1", None, "vol-0b2"],
        "line_item_unblended_cost": pa.array(
            [Decimal("1.2500000000"), Decimal("0"), None], pa.decimal128(38, 10)
        ),
        "usage_start": pa.array(
            [datetime(2026, 11, 30, tzinfo=UTC), None, datetime(2026, 12, 1, 15, tzinfo=UTC)],
            pa.timestamp("ms", tz="UTC"),
        ),
        "usage_amount": [24.0, None, 0.5],
        "line_item_usage_account_id": ["123456789012"] * 3,
    }
)


def written(**options: Any) -> bytes:
    out = io.BytesIO()
    pq.write_table(TABLE, out, **options)
    return out.getvalue()


@pytest.mark.parametrize(
    "options",
    [
        {"compression": "snappy"},
        {"compression": "gzip"},
        {"compression": "none"},
        {"compression": "snappy", "data_page_version": "2.0"},
        {"compression": "snappy", "use_dictionary": False},
    ],
    ids=["snappy", "gzip", "none", "page-v2", "plain"],
)
def test_the_reader_reads_what_pyarrow_writes(options: dict[str, Any]) -> None:
    data = written(**options)
    assert read_columns(data, TABLE.column_names) == TABLE.to_pylist()


def test_a_codec_the_reader_lacks_is_refused_in_one_line() -> None:
    with pytest.raises(ParquetReadError, match=r"(?i)zstd"):
        read_columns(written(compression="zstd"), TABLE.column_names)
