"""The opt-in FOCUS 1.3 export end to end: `costtracker replay --focus-dir D
--focus-version 1.3` writes the 1.3 files (allocation columns, no x_JobId), they meet the
1.3 checks, and the reconciliation reads their job from AllocatedResourceId."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from costtracker.cli import main
from shared.reports.focus13 import COLUMN_NAMES_13, check_rows_13
from shared.services.data_exports import estimates_from_focus_rows

SCENARIO = Path(__file__).parent.parent / "scenarios" / "three_days.json"


def test_replay_writes_the_1_3_export_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["replay", str(SCENARIO), "--json", "--focus-dir", str(tmp_path)]
    assert main([*argv, "--focus-version", "1.3"]) == 0
    capsys.readouterr()
    day = tmp_path / "focus/2026/11/02"
    assert sorted(p.name for p in day.iterdir()) == [
        "focus-1.3.csv", "focus-1.3.metadata.json", "focus-1.3.parquet"
    ]  # fmt: skip
    table = pq.read_table(day / "focus-1.3.parquet")
    assert table.column_names == list(COLUMN_NAMES_13)
    rows = table.to_pylist()
    assert rows and check_rows_13(rows) == []
    assert {r["AllocatedResourceId"] for r in rows} == {"alpha-pretrain", "beta-sweep"}
    assert {r["AllocatedMethodId"] for r in rows} >= {
        "costtracker/JobTag", "costtracker/AttachedVolume"
    }  # fmt: skip
    metadata = json.loads((day / "focus-1.3.metadata.json").read_text())
    assert metadata["FocusVersion"] == "1.3"
    assert "costtracker/JobTag" in metadata["AllocatedMethods"]
    assert {e.job_id for e in estimates_from_focus_rows(rows)} == {"alpha-pretrain", "beta-sweep"}


def test_an_unknown_focus_version_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["replay", str(SCENARIO), "--focus-dir", "/tmp/x", "--focus-version", "1.1"])
    assert exit_.value.code == 2
    assert "invalid choice: '1.1'" in capsys.readouterr().err
