"""The README's demo transcript is what `costtracker demo --no-serve` prints: its job
table, figure for figure, and the as-of line under it. A change to the example or to
the costing that moves a figure must move the README with it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from costtracker.cli import main

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_job_table() -> list[str]:
    """The lines of the README's `$ make demo` block from the table's header to the
    line naming INST-H."""
    block = re.search(r"\$ make demo\n(.*?)```", README.read_text(), re.S)
    assert block, "the README has no `$ make demo` transcript"
    lines = block.group(1).splitlines()
    first = next(n for n, line in enumerate(lines) if line.startswith("JOB "))
    last = next(n for n, line in enumerate(lines) if line.startswith("INST-H:"))
    return lines[first : last + 1]


def test_the_readme_demo_table_is_what_the_demo_prints(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["demo", "--no-serve"]) == 0
    printed = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    expected = [line.rstrip() for line in readme_job_table()]
    start = printed.index(expected[0])
    assert printed[start : start + len(expected)] == expected
