"""The daily files (shared.services.summaries.publish_summary): a day without
charges writes no empty FOCUS data file, only its summary and a metadata file that
says so."""

import json
from datetime import UTC, date, datetime
from pathlib import Path

from shared.adapters.report_store import DirectoryReportStore
from shared.services.summaries import NO_CHARGES_NOTE, publish_summary, summarize_day
from tests.support import memory_ledger

DAY = date(2026, 11, 1)


def test_a_day_without_charges_has_metadata_and_no_empty_data_file(tmp_path: Path) -> None:
    ledger = memory_ledger()
    summary, rows = summarize_day(ledger.deps, DAY, datetime(2026, 11, 2, 1, tzinfo=UTC))
    assert rows == []
    keys = publish_summary(summary, rows, DirectoryReportStore(tmp_path), None)
    assert keys == [
        "focus/2026/11/01/focus-1.2.metadata.json",
        "summaries/2026/11/01/summary.csv",
        "summaries/2026/11/01/summary.json",
    ]
    metadata = json.loads((tmp_path / "focus/2026/11/01/focus-1.2.metadata.json").read_text())
    assert metadata["Rows"] == 0 and metadata["Notes"].endswith(NO_CHARGES_NOTE)
    assert metadata["FocusVersion"] == "1.2" and metadata["Columns"]
