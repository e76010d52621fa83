"""The words, figures and table every human view of the CLI uses: plain tables that fit
an 80-column terminal (cells wrap, no column is dropped), figures with their units, rates
to their real precision.

Words people read: a job's status ``complete`` (every instance terminated) is shown as
"finished"; the JSON flag ``complete`` (every second priced) as "fully priced" or
"incomplete", with "at least $X" and the missing price named.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from shared.reports.views import cents

WIDTH = 80
STATUS_WORDS = {
    "running": "running",
    "stopped": "stopped",
    "interrupted": "interrupted",
    "complete": "finished",
}


def usd(value: str | None) -> str:
    """Money to the cent ("-" when unknown)."""
    return "-" if value is None else cents(Decimal(value))


def rate(value: str | None) -> str:
    """A price as it is (0.096 stays $0.096, 21.50 is $21.50): trailing zeros dropped,
    at least cents."""
    if value is None:
        return "-"
    exact = Decimal(value).normalize()
    places = max(2, -int(exact.as_tuple().exponent))
    return f"${exact:,.{places}f}"


def per_unit(value: str | None, digits: int = 4) -> str:
    """A derived figure ($/step, $/1M tokens, $/h) to ``digits`` significant digits,
    at least cents: $0.8350, $218.9, $1,313.27."""
    if value is None:
        return "-"
    number = Decimal(value)
    if number == 0:
        return "$0.00"
    magnitude = number.adjusted()  # the exponent of the leading digit
    places = max(2, digits - 1 - magnitude)
    quantum = Decimal(1).scaleb(-places)
    return f"${number.quantize(quantum, rounding=ROUND_HALF_EVEN):,.{places}f}"


def hours(seconds: int | float | Decimal | None) -> str:
    if seconds is None:
        return "-"
    return f"{Decimal(seconds) / 3600:,.2f} h"


def status_word(status: str) -> str:
    return STATUS_WORDS.get(status, status)


def missing_prices(job: dict[str, Any]) -> list[str]:
    """The unpriced items of a job, in words: "no ec2 price for trn2.48xlarge in us-east-1"."""
    out = []
    for item in job.get("unconfirmed", []):
        if item.startswith("unpriced:"):
            _, kind, key, region = [*item.split(":", 3), "", "", ""][:4]
            out.append(f"no {kind} price for {key} in {region}")
    return out


def priced_word(job: dict[str, Any]) -> str:
    return "fully priced" if job.get("complete", True) else "incomplete"


def total(job: dict[str, Any], value: str | None = None) -> str:
    """The total, as "at least $X" when some time is unpriced."""
    figure = usd(value if value is not None else job["cost_usd"]["total"])
    return figure if job.get("complete", True) else f"at least {figure}"


def _wrap(cell: str, width: int) -> list[str]:
    if len(cell) <= width:
        return [cell]
    return textwrap.wrap(cell, width, break_long_words=True, break_on_hyphens=False) or [""]


def table(rows: Sequence[Sequence[str]], width: int = WIDTH, right: Sequence[int] = ()) -> str:
    """Columns two spaces apart; when the table is wider than ``width``, the widest
    columns are narrowed and their cells wrap onto more lines (nothing is cut)."""
    if not rows:
        return ""
    count = len(rows[0])
    widths = [max(len(str(r[i])) for r in rows) for i in range(count)]
    floor = 8
    # Narrow the widest of the later columns first: the first one names the row.
    order = [*range(1, count), 0] if count > 1 else [0]
    while sum(widths) + 2 * (count - 1) > width:
        flexible = [i for i in order if widths[i] > floor]
        if not flexible:
            break
        later = [i for i in flexible if i != 0] or flexible
        widest = max(later, key=lambda i: widths[i])
        widths[widest] -= 1
    lines = []
    for row in rows:
        cells = [_wrap(str(c), w) for c, w in zip(row, widths, strict=True)]
        for n in range(max(len(c) for c in cells)):
            parts = []
            for i, (cell, w) in enumerate(zip(cells, widths, strict=True)):
                text = cell[n] if n < len(cell) else ""
                parts.append(text.rjust(w) if i in right else text.ljust(w))
            lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def fill(text: str, indent: str, first: str) -> str:
    return textwrap.fill(text, WIDTH, initial_indent=first, subsequent_indent=indent)


def long_line(line: str, indent: int = 10) -> str:
    """A line of ``job_show`` wrapped under its label."""
    return (
        line if len(line) <= WIDTH else textwrap.fill(line, WIDTH, subsequent_indent=" " * indent)
    )
