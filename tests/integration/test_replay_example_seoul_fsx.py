"""The packaged example ``seoul-fsx-month-end`` (run by ``make focus-validate``), worked by
hand. Seoul finance days are [15:00Z, 15:00Z); prices from the bundled snapshot
(us-east-1: trn1.32xlarge $21.50/h, PERSISTENT_2_125 $0.145 and SCRATCH_2 $0.140 per
GB-month); storage prorated per second over calendar months (November 720 h, December
744 h).

fs-...f001 PERSISTENT_2_125, job llama: 1,200 GiB from 11-30T12:00Z, 2,400 GiB from
  18:00Z, deleted 12-01T20:00Z.
fs-...f002 SCRATCH_2, job llama-eval: 1,200 GiB from 11-30T14:00Z, never deleted.
fs-...f003 untagged: left out. fs-...f004 PERSISTENT_9: unpriced.

Seoul 30 November [11-29T15Z, 11-30T15Z): f001 1,200 x 0.145 x 3/720 = 0.725;
  f002 1,200 x 0.14 x 1/720 = 0.2333...
Seoul 1 December [11-30T15Z, 12-01T15Z), cut at 12-01T00Z for FOCUS's BillingPeriod:
  f001 November 1,200 x 0.145 x 3/720 + 2,400 x 0.145 x 6/720 = 3.625,
       December 2,400 x 0.145 x 15/744 = 7.01612903...
  f002 November 1,200 x 0.14 x 9/720 = 2.1, December 1,200 x 0.14 x 15/744 = 3.38709677...
Seoul 2 December: f001 2,400 x 0.145 x 5/744 = 2.33870967..., f002 1,200 x 0.14 x 24/744.
"""

from __future__ import annotations

import json
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Any

from costtracker.replay import replay
from costtracker.scenario import Scenario
from shared.reports.parquet import read_columns

TOL = Decimal("1e-9")
F1, F2 = "fs-0a00000000000f001", "fs-0a00000000000f002"
P2, S2 = Decimal("0.145"), Decimal("0.14")


def example() -> Scenario:
    text = resources.files("costtracker").joinpath("examples/seoul-fsx-month-end.json")
    return Scenario.model_validate(json.loads(text.read_text()))


def fsx_rows(root: Path, day: str) -> list[tuple[str, str, str, Decimal]]:
    y, m, d = day.split("-")
    data = (root / "focus" / y / m / d / "focus-1.2.parquet").read_bytes()
    wanted = ["ServiceName", "ResourceId", "ChargePeriodStart", "BillingPeriodStart", "BilledCost"]
    return sorted(
        (
            r["ResourceId"].rsplit("/", 1)[1],
            r["ChargePeriodStart"].isoformat(),
            r["BillingPeriodStart"].date().isoformat(),
            Decimal(r["BilledCost"]),
        )
        for r in read_columns(data, wanted, source=day)
        if r["ServiceName"] == "Amazon FSx"
    )


def close(got: list[tuple[str, str, str, Decimal]], want: list[tuple[str, str, str, Any]]) -> None:
    assert [g[:3] for g in got] == [w[:3] for w in want]
    for g, w in zip(got, want, strict=True):
        assert abs(g[3] - Decimal(w[3])) < TOL, (g, w)


def test_seoul_days_carry_fsx_rows_cut_at_the_utc_month_end(tmp_path: Path) -> None:
    document = replay(example(), focus_dir=tmp_path)
    assert [s["date"] for s in document["daily_summaries"]] == [
        "2026-11-30",
        "2026-12-01",
        "2026-12-02",
    ]
    close(
        fsx_rows(tmp_path, "2026-11-30"),
        [
            (F1, "2026-11-29T15:00:00+00:00", "2026-11-01", 1200 * P2 * 3 / 720),
            (F2, "2026-11-29T15:00:00+00:00", "2026-11-01", 1200 * S2 * 1 / 720),
        ],
    )
    close(
        fsx_rows(tmp_path, "2026-12-01"),
        [
            (F1, "2026-11-30T15:00:00+00:00", "2026-11-01", "3.625"),
            (F1, "2026-12-01T00:00:00+00:00", "2026-12-01", 2400 * P2 * 15 / 744),
            (F2, "2026-11-30T15:00:00+00:00", "2026-11-01", "2.1"),
            (F2, "2026-12-01T00:00:00+00:00", "2026-12-01", 1200 * S2 * 15 / 744),
        ],
    )
    close(
        fsx_rows(tmp_path, "2026-12-02"),
        [
            (F1, "2026-12-01T15:00:00+00:00", "2026-12-01", 2400 * P2 * 5 / 744),
            (F2, "2026-12-01T15:00:00+00:00", "2026-12-01", 1200 * S2 * 24 / 744),
        ],
    )


def test_left_out_and_unpriced_file_systems_in_the_example() -> None:
    document = replay(example())
    jobs = {j["job_id"]: j for j in document["jobs"]}
    assert sorted(jobs) == ["llama", "llama-eval", "llama-exp"]  # f003 untagged: no job
    assert jobs["llama-exp"]["complete"] is False
    assert jobs["llama-exp"]["unpriced"] == ["fsx:PERSISTENT_9_125:us-east-1"]
    assert jobs["llama"]["complete"] is True
    fsx = Decimal(jobs["llama"]["cost_usd"]["fsx"])
    want = 1200 * P2 * 6 / 720 + 2400 * P2 * 6 / 720 + 2400 * P2 * 20 / 744
    assert abs(fsx - want) < TOL
    assert [s["complete"] for s in document["daily_summaries"]] == [True, False, False]
