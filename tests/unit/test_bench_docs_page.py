"""The benchmarks page's figures come from a results file, never typed in."""

import json
from pathlib import Path

from bench.docs_page import BEGIN, END, render, update


def _results(tmp_path: Path) -> Path:
    path = tmp_path / "results.json"
    path.write_text(
        json.dumps(
            {
                "generated_at": "2026-12-02T01:00:00+00:00",
                "mode": "quick",
                "python": "3.11.9",
                "scenario": {"instances": 10, "days": 1, "events": 1234},
                "figures": [
                    {
                        "section": "1",
                        "name": "items per state event",
                        "value": 2.36,
                        "unit": "items",
                        "target": "<= 3",
                        "met": True,
                    },
                    {
                        "section": "3",
                        "name": "replay / floor",
                        "value": 1.32,
                        "unit": "x",
                        "target": ">= 2",
                        "met": False,
                    },
                    {
                        "section": "4",
                        "name": "cold start",
                        "value": None,
                        "unit": "x",
                        "target": "<= 1.5",
                        "met": None,
                    },
                ],
            }
        )
    )
    return path


def test_each_figure_is_a_row_with_its_status(tmp_path: Path) -> None:
    block = render([_results(tmp_path)])
    assert block.startswith(BEGIN) and block.endswith(END)
    assert "| items per state event | 2.36 | items | <= 3 | met |" in block
    assert "| replay / floor | 1.32 | x | >= 2 | **MISSED** |" in block
    assert "| cold start | not measured | x | <= 1.5 | NOT MEASURED |" in block
    assert "Run at 2026-12-02T01:00:00+00:00, mode `quick`" in block
    assert "events 1,234" in block


def test_only_the_block_between_the_markers_is_replaced(tmp_path: Path) -> None:
    page = tmp_path / "benchmarks.md"
    page.write_text(f"# Benchmarks\n\nprose\n\n{BEGIN}\nold figures\n{END}\n\nafter\n")
    text = update(page, render([_results(tmp_path)]))
    assert "old figures" not in text
    assert text.startswith("# Benchmarks\n\nprose\n\n") and text.endswith(f"{END}\n\nafter\n")


def test_the_committed_page_has_the_markers() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md").read_text()
    assert text.count(BEGIN) == 1 and text.count(END) == 1
