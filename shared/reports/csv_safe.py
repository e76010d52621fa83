"""CSV for spreadsheets, safe to open: the OWASP advice against CSV (formula) injection.

A text cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is run
as a formula by spreadsheet programs; such a cell gets a leading apostrophe (``'``), which
they show as text. Plain numbers (``-1.5``) are left alone: they are data, not formulas.
A null is written as an empty, unquoted cell; the csv module quotes only where needed.
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
    writer = csv.writer(out, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
    writer.writerow([neutralise(h) for h in header])
    for row in rows:
        writer.writerow(["" if cell is None else neutralise(cell) for cell in row])
    return out.getvalue()
