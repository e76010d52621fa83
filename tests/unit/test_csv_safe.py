"""CSV cells a spreadsheet cannot turn into formulas or extra rows (shared.reports.csv_safe)."""

from __future__ import annotations

import csv
import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.reports.csv_safe import write_csv, write_csv_columns


def read_back(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def test_a_carriage_return_inside_a_cell_stays_in_that_cell() -> None:
    text = write_csv(["job", "cost"], [["x\r=1", "2.00"]])
    assert read_back(text) == [["job", "cost"], ["x\r=1", "2.00"]]
    # No raw \r outside quotes: a spreadsheet would start a row there, "=1" its formula.
    assert text == 'job,cost\n"x\r=1",2.00\n'


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ("a\nb", '"a\nb"'),
        ('say "hi"', '"say ""hi"""'),
        ("a,b", '"a,b"'),
        ("\r=1+1", '"\'\r=1+1"'),  # neutralised, then quoted
        ("plain", "plain"),
    ],
)
def test_cells_with_line_ends_quotes_or_commas_are_quoted(cell: str, written: str) -> None:
    text = write_csv(["c"], [[cell]])
    assert text == f"c\n{written}\n"
    assert read_back(text)[1] == [cell if not cell.startswith("\r") else "'" + cell]


def test_nulls_are_empty_unquoted_cells_and_rows_end_with_a_line_feed() -> None:
    assert write_csv(["a", "b"], [[None, "1"], ["2", None]]) == "a,b\n,1\n2,\n"


CELLS = [None, "", "plain", "a,b", 'say "hi"', "a\nb", "x\r=1", "\r=1+1", "=SUM(A1)", "-1.5",
         "-x", "@me", "\ttab", "a\r\nb", '""', ",", "é"]  # fmt: skip


@pytest.mark.parametrize("width", [1, 2, 3])
def test_columns_are_written_as_the_same_rows_are(width: int) -> None:
    rows = [[CELLS[(n + k) % len(CELLS)] for k in range(width)] for n in range(len(CELLS))]
    header = [f"h{k}" for k in range(width)]
    columns = [[row[k] for row in rows] for k in range(width)]
    assert write_csv_columns(header, columns) == write_csv(header, rows)


@given(st.lists(st.lists(st.one_of(st.none(), st.text()), min_size=3, max_size=3), max_size=8))
def test_any_columns_are_written_as_the_same_rows_are(rows: list[list[str | None]]) -> None:
    columns = [[row[k] for row in rows] for k in range(3)]
    assert write_csv_columns(["a", "=b", "c,d"], columns) == write_csv(["a", "=b", "c,d"], rows)


def test_a_lone_empty_cell_is_a_quoted_line_not_a_blank_one() -> None:
    assert write_csv_columns(["c"], [["", None, "x"]]) == 'c\n""\n""\nx\n'
