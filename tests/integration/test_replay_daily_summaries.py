"""Daily summaries over three UTC days, segments across both midnights: hand-worked.

Scenario tests/scenarios/three_days.json (make_three_days.py), until 2026-11-04T00:00Z.
alpha-pretrain (project alpha): trn1.32xlarge $21.50/h, running 11-01 20:00 -> stopped
  11-03 04:00; 100 GiB gp3 at $0.08 accrues from 20:00 on, stopped time included
  ($8/month, November = 2,592,000 s).
beta-sweep (project beta): p5.48xlarge spot $20/h: 11-02 12:00:00-12:00:30 (30 s, billed
  60 s on 11-02) and 11-02 23:59:30-11-03 00:00:20 (30 s on 11-02, 20 s + the 10 s
  minimum top-up on 11-03, the day it closed).
untagged:i-0c3d0000000000cc3: p4d.24xlarge (snapshot $21.957642/h), 11-03 10:00-11:00.

11-01: 4 h x 21.50 = 86 + EBS 14,400 s x 8 / 2,592,000 = 0.044444444 -> 86.044444444
11-02: 516 + EBS 0.266666667 + beta 0.333333333 + 0.166666667      -> 516.766666667
11-03: 86 + EBS 0.266666667 + beta 0.166666667 + untagged 21.957642 -> 108.390975333
Sum 711.202086444 = the jobs' totals.
"""

from __future__ import annotations

import csv
import io
import re
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from costtracker.replay import replay
from costtracker.scenario import Scenario
from shared.reports.focus import COLUMN_NAMES
from shared.reports.focus_checks import check_rows
from shared.reports.formatting import money
from tests.integration.conftest import results, scenario_dict

TOL = Decimal("1e-6")
EBS_DAY = Decimal(86400) * 8 / 2592000
SPOT_SECOND = Decimal(20) / 3600
EXPECTED = {
    "2026-11-01": {
        "total": Decimal(86) + Decimal(14400) * 8 / 2592000,
        "alpha": Decimal(86) + Decimal(14400) * 8 / 2592000,
        "beta": None,
        "untagged": Decimal(0),
    },
    "2026-11-02": {
        "total": Decimal(516) + EBS_DAY + 90 * SPOT_SECOND,
        "alpha": Decimal(516) + EBS_DAY,
        "beta": 90 * SPOT_SECOND,
        "untagged": Decimal(0),
    },
    "2026-11-03": {
        "total": Decimal(86) + EBS_DAY + 30 * SPOT_SECOND + Decimal("21.957642"),
        "alpha": Decimal(86) + EBS_DAY,
        "beta": 30 * SPOT_SECOND,
        "untagged": Decimal("21.957642"),
    },
}


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    focus = tmp_path_factory.mktemp("focus")
    doc = replay(Scenario.model_validate(scenario_dict("three_days.json")), focus_dir=focus)
    doc["_focus_dir"] = str(focus)
    return doc


def test_each_day_and_tag_split_equals_the_hand_calculation(document: dict[str, Any]) -> None:
    summaries = {s["date"]: s for s in document["daily_summaries"]}
    assert list(summaries) == list(EXPECTED)
    for day, expected in EXPECTED.items():
        summary = summaries[day]
        assert abs(Decimal(summary["total_usd"]) - expected["total"]) <= TOL, day
        projects = summary["by_tag"].get("project", {})
        assert abs(Decimal(projects["alpha"]) - expected["alpha"]) <= TOL, day
        if expected["beta"] is None:
            assert "beta" not in projects
        else:
            assert abs(Decimal(projects["beta"]) - expected["beta"]) <= TOL, day
        assert abs(Decimal(summary["untagged_usd"]) - expected["untagged"]) <= TOL, day


def test_days_add_up_to_the_jobs_totals(document: dict[str, Any]) -> None:
    days = sum(Decimal(s["total_usd"]) for s in document["daily_summaries"])
    jobs = sum(Decimal(j["cost_usd"]["total"]) for j in document["jobs"])
    assert abs(days - jobs) <= TOL
    assert abs(days - Decimal("711.202086444")) <= TOL


def test_untagged_instances_and_tag_compliance_are_listed(document: dict[str, Any]) -> None:
    third = document["daily_summaries"][2]
    assert third["untagged_instances"] == ["i-0c3d0000000000cc3"]
    missing = {c["instance_id"]: c["missing"] for c in third["tag_compliance"]}
    assert missing["i-0c3d0000000000bb2"] == ["owner"]
    assert missing["i-0c3d0000000000cc3"] == ["project", "team", "owner"]
    assert third["change_vs_previous_day_usd"] is not None


def _parquet_rows(path: Path) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
    return rows


def test_focus_parquet_passes_the_focus_rules(document: dict[str, Any]) -> None:
    root = Path(document["_focus_dir"])
    for day in EXPECTED:
        folder = root / "focus" / day.replace("-", "/")
        rows = _parquet_rows(folder / "focus-1.2.parquet")
        assert rows, day
        assert list(rows[0]) == list(COLUMN_NAMES)
        assert check_rows(rows) == []
        assert all(r["BillingAccountId"] == "123456789012" for r in rows)  # text, typed
        billed = sum(r["BilledCost"] for r in rows)
        assert abs(billed - EXPECTED[day]["total"]) <= Decimal("1e-6"), day
        kinds = {r["x_ChargeKind"] for r in rows}
        assert {"instance", "ebs_volume"} <= kinds, day
        assert all(r["InvoiceId"] is None and r["ChargeClass"] is None for r in rows)


def test_focus_csv_says_what_the_parquet_says(document: dict[str, Any]) -> None:
    """Same rows, same values as text; a null is an empty unquoted cell, never ``""``."""
    root = Path(document["_focus_dir"])
    for day in EXPECTED:
        folder = root / "focus" / day.replace("-", "/")
        text = (folder / "focus-1.2.csv").read_text()
        assert not any(re.search(r'(^|,)""(,|$)', line) for line in text.splitlines())
        with (folder / "focus-1.2.csv").open(newline="") as handle:
            csv_rows = list(csv.DictReader(handle))
        typed = _parquet_rows(folder / "focus-1.2.parquet")
        assert len(csv_rows) == len(typed)
        for as_text, row in zip(csv_rows, typed, strict=True):
            for column, value in row.items():
                if value is None:
                    assert as_text[column] == "", column
                elif isinstance(value, Decimal):
                    assert Decimal(as_text[column]) == value, column
                elif isinstance(value, bool):
                    assert as_text[column] == str(value).lower()
                elif isinstance(value, str):
                    assert as_text[column] == value, column


def test_focus_checker_catches_broken_rows(document: dict[str, Any]) -> None:
    rows = _parquet_rows(Path(document["_focus_dir"]) / "focus/2026/11/02/focus-1.2.parquet")
    assert check_rows(rows) == []
    bad = {
        **rows[0],
        "BilledCost": Decimal(-1),
        "ChargePeriodEnd": rows[0]["BillingPeriodEnd"] + timedelta(days=1),
        "ServiceCategory": "Spaceships",
        "Tags": "[1]",
    }
    problems = " ".join(check_rows([bad]))
    for expected in ("negative", "inside BillingPeriod", "ServiceCategory", "JSON object"):
        assert expected in problems


def test_shuffled_and_duplicated_delivery_gives_the_same_summaries_and_files(
    document: dict[str, Any], tmp_path: Path
) -> None:
    """The same scenario, its events shuffled and doubled: the same summaries, and the
    same bytes in every file written (a volume the scenario names no id for included)."""
    shuffled = replay(
        Scenario.model_validate(scenario_dict("three_days_shuffled.json")), focus_dir=tmp_path
    )
    ours = {k: v for k, v in results(document).items() if k != "_focus_dir"}
    assert results(shuffled)["daily_summaries"] == ours["daily_summaries"]
    assert results(shuffled)["jobs"] == ours["jobs"]
    root = Path(document["_focus_dir"])
    written = sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file())
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file()) == written
    assert any(p.suffix == ".parquet" for p in written)
    for relative in written:
        assert (tmp_path / relative).read_bytes() == (root / relative).read_bytes(), relative


def test_the_deployed_daily_summary_writes_the_parquet_to_s3() -> None:
    """The daily_summary function (run by the replay's schedule) puts the typed export in
    the reports bucket beside the CSV."""
    import pyarrow.parquet as pq

    from costtracker.emulator import REPORT_BUCKET
    from costtracker.replay import replay_session

    scenario = Scenario.model_validate(scenario_dict("three_days.json"))
    with replay_session(scenario) as replayer:
        replayer.run()
        s3 = replayer.emulator.client("s3")
        keys = {o["Key"] for o in s3.list_objects_v2(Bucket=REPORT_BUCKET)["Contents"]}
        assert {"focus/2026/11/02/focus-1.2.parquet", "focus/2026/11/02/focus-1.2.csv"} <= keys
        got = s3.get_object(Bucket=REPORT_BUCKET, Key="focus/2026/11/02/focus-1.2.parquet")
        assert got["ContentType"] == "application/vnd.apache.parquet"
        rows = pq.read_table(io.BytesIO(got["Body"].read())).to_pylist()
    assert rows and check_rows(rows) == []


def _message(document: dict[str, Any], day: str) -> str:
    (found,) = [m for m in document["messages"] if m["alert_id"] == f"daily_summary:{day}"]
    return str(found["body"])


def test_the_mean_is_over_the_days_there_are_and_says_how_many(
    document: dict[str, Any],
) -> None:
    first, second, third = document["daily_summaries"]
    assert (first["trailing_mean_usd"], first["trailing_mean_days"]) == (None, 0)
    assert (second["trailing_mean_usd"], second["trailing_mean_days"]) == (first["total_usd"], 1)
    mean = (Decimal(first["total_usd"]) + Decimal(second["total_usd"])) / 2
    assert third["trailing_mean_usd"] == money(mean)
    assert third["trailing_mean_days"] == 2
    assert "Daily mean of the previous 1 day: $86.04" in _message(document, "2026-11-02")
    assert "mean" not in _message(document, "2026-11-01")
    assert "7-day" not in _message(document, "2026-11-02")


def test_the_message_names_spend_without_each_key_and_the_instances_to_tag(
    document: dict[str, Any],
) -> None:
    first, second = _message(document, "2026-11-01"), _message(document, "2026-11-02")
    assert "By project: alpha $86.04, (none) $0.00" in first.splitlines()
    assert "By owner: ana $516.27, (none) $0.50" in second.splitlines()
    assert "Instances missing required tags: i-0c3d0000000000bb2 (owner)" in second.splitlines()


def test_replay_alerts_shows_each_daily_summary_message(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from costtracker.cli import main

    path = Path(__file__).resolve().parents[1] / "scenarios" / "three_days.json"
    assert main(["replay", str(path), "--alerts"]) == 0
    out = capsys.readouterr().out
    assert "No alert would be sent." not in out
    # The replay ends at 11-04 00:00, before the last day's summary runs (00:15).
    for day in ("2026-11-01", "2026-11-02"):
        assert f"Subject:  ML training spend {day}: $" in out
        assert f"alert_id=daily_summary:{day}" in out
    assert "To:       the finance topic's subscribers (finance_emails)" in out


def test_summary_csv_says_each_figure_is_estimated(document: dict[str, Any]) -> None:
    root = Path(document["_focus_dir"])
    with (root / "summaries/2026/11/02/summary.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == ["date", "group", "value", "usd", "basis"]
    assert {r["basis"] for r in rows} == {"estimated"}
    assert ("tag:owner", "(none)") in {(r["group"], r["value"]) for r in rows}
