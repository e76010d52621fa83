"""The benchmark's table, apart from what it measures: every line is printed as it comes
and kept (results.json's ``table``), every figure is a row (name, value, unit, target,
met or MISSED or NOT MEASURED) and kept (results.json's ``figures``); the sections
(``bench.sections``) and ``python -m bench`` write through one ``Report``."""

from __future__ import annotations

import statistics
from typing import Any

WIDTH = 100


class Report:
    def __init__(self) -> None:
        self.figures: list[dict[str, Any]] = []
        self.lines: list[str] = []

    def out(self, line: str = "") -> None:
        self.lines.append(line)
        print(line, flush=True)

    def section(self, title: str) -> None:
        self.out()
        self.out(f"== {title} " + "=" * max(0, WIDTH - len(title) - 4))

    def figure(
        self,
        section: str,
        name: str,
        value: float | None,
        unit: str,
        target: str = "",
        met: bool | None = None,
        fmt: str = ",.2f",
    ) -> None:
        self.figures.append(
            {
                "section": section,
                "name": name,
                "value": value,
                "unit": unit,
                "target": target or None,
                "met": met,
            }
        )
        shown = "n/a" if value is None else format(value, fmt)
        status = "" if met is None else ("met" if met else "MISSED")
        if value is None and target:
            status = "NOT MEASURED"
        self.out(f"{name[:44]:<44} {shown:>14} {unit[:12]:<12} {target[:16]:<16} {status}")

    def header(self) -> None:
        self.out(f"{'figure':<44} {'value':>14} {'unit':<12} {'target':<16} status")


def median_or_zero(xs: list[float]) -> float:
    return statistics.median(xs) if xs else 0.0
