"""CSV for spreadsheets, safe to open: the OWASP advice against CSV (formula) injection.

A text cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is run
as a formula by spreadsheet programs; such a cell gets a leading apostrophe (``'``), which
they show as text. Plain numbers (``-1.5``) are left alone: they are data, not formulas.
A null is written as an empty, unquoted cell. Any cell holding a carriage return, a
line feed, a double quote or a comma is quoted (RFC 4180): a lone ``\r`` left raw would
start a new row in a spreadsheet, whose first cell could then be a formula. Rows end with
``\n``.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$")


def neutralise(cell: str) -> str:
    """The cell with a leading apostrophe if a spreadsheet would take it as a formula."""
    if cell.startswith(FORMULA_TRIGGERS) and not _NUMBER.match(cell):
        return "'" + cell
    return cell


def safe_cells(cells: Iterable[str | None]) -> list[str]:
    """One column's (or row's) cells as written: neutralised, ``None`` as ``""``."""
    # Only a cell that begins with a trigger is looked at further: most begin with none.
    return [
        "" if cell is None else neutralise(cell) if cell.startswith(FORMULA_TRIGGERS) else cell
        for cell in cells
    ]


def write_csv(header: Sequence[str], rows: Iterable[Sequence[str | None]]) -> str:
    """Header and rows, every text cell neutralised, ``None`` as an empty cell."""
    return _written([safe_cells(header), *(safe_cells(row) for row in rows)])


def write_csv_columns(header: Sequence[str], columns: Sequence[Sequence[str | None]]) -> str:
    """``write_csv`` of the rows these columns (one per header cell, of equal length)
    make, written column by column: a file's many cells are quoted only in a column that
    holds a cell to quote, and its lines joined without the csv module."""
    cells = [
        _quoted(safe_cells([name, *column])) for name, column in zip(header, columns, strict=True)
    ]
    if len(cells) == 1:  # a line of one empty cell is "" (as the csv module writes it)
        cells = [[cell or '""' for cell in cells[0]]]
    return "".join([",".join(row) + "\n" for row in zip(*cells, strict=True)])


_TO_QUOTE = re.compile(r'[\r\n",]')


def _quoted(cells: list[str]) -> list[str]:
    """A column's cells, each holding a CR, an LF, a double quote or a comma in quotes,
    its quotes doubled (RFC 4180, as the csv module quotes them with "\r\n" rows)."""
    if not _TO_QUOTE.search("".join(cells)):  # most columns hold none
        return cells
    return ['"' + c.replace('"', '""') + '"' if _TO_QUOTE.search(c) else c for c in cells]


def _written(rows: Sequence[Sequence[str]]) -> str:
    """The rows (of written cells) as CSV text, each row ending with ``\n``."""
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_MINIMAL, lineterminator="\n").writerows(rows)
    text = out.getvalue()
    if "\r" not in text:  # the writer adds none: no cell holds a \r
        return text
    # The csv module quotes a cell holding a character of the line terminator: with
    # "\n" alone a \r is written raw, so such a file is written with "\r\n", row by row.
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_MINIMAL, lineterminator=_CRLF)
    lines = []
    for row in rows:
        writer.writerow(row)
        lines.append(out.getvalue().removesuffix(_CRLF))
        out.seek(0)
        out.truncate()
    return "".join(line + "\n" for line in lines)


_CRLF = "\r\n"
