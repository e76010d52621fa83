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


def write_csv(header: Sequence[str], rows: Iterable[Sequence[str | None]]) -> str:
    """Header and rows, every text cell neutralised, ``None`` as an empty cell."""
    out = io.StringIO()
    # The csv module quotes a cell holding a character of the line terminator: with
    # "\r\n" that is both \r and \n (with "\n" alone a \r would be written raw).
    writer = csv.writer(out, quoting=csv.QUOTE_MINIMAL, lineterminator=_CRLF)
    lines = []
    for row in [list(header), *rows]:
        writer.writerow(["" if cell is None else neutralise(cell) for cell in row])
        lines.append(out.getvalue().removesuffix(_CRLF))
        out.seek(0)
        out.truncate()
    return "".join(line + "\n" for line in lines)


_CRLF = "\r\n"
