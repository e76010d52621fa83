"""CSV cells a spreadsheet cannot turn into formulas or extra rows (shared.reports.csv_safe)."""

from __future__ import annotations

import csv
import io

import pytest

from shared.reports.csv_safe import write_csv


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
