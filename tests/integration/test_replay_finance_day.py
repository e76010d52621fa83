"""Replays of the finance day (cost rule 12) and of FSx for Lustre (rule 13), worked by
hand. Instances have no volumes (no EBS) so that each figure is rate x hours.

Seoul: trn1.32xlarge at $21.50/h runs 2026-11-01 13:00Z -> 17:00Z, across 15:00Z (Seoul
  midnight): 2 h on Seoul's 1 November [10-31T15:00Z, 11-01T15:00Z) = $43.00 and 2 h on
  2 November = $43.00 (in UTC it would be one day of $86.00).
New York: g5.xlarge at $2/h runs 2026-11-01 03:00Z -> 11-02 06:00Z: 1 h on 31 October
  (EDT), 25 h on 1 November [04:00Z, 05:00Z next day) = $50, 1 h on 2 November (EST).
Month budget in New York ($100, 50 % and 100 %): $10/h from 2026-11-30 23:00Z to
  2026-12-01 10:00Z. In New York the first 6 h are November's (18:00-24:00 EST): 50 % at
  04:00Z; December starts at 05:00Z and reaches $50 at 10:00Z: 50 % again, in its own
  period. In UTC November holds 1 h ($10) and December 10 h: 50 % at 05:00Z, 100 % at 10:00Z.
FOCUS in Seoul: 2 December [12-01T15:00Z, 12-02T15:00Z) holds no month end, 1 December
  [11-30T15:00Z, 12-01T15:00Z) holds the UTC one: its rows are cut at 12-01T00:00Z.
FSx: see tests/unit/test_fsx.py for the figures of the resized file system.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

from costtracker.replay import replay
from costtracker.scenario import Scenario
from shared.reports.focus import COLUMN_NAMES
from shared.reports.parquet import read_columns
from tests.aws_events import ec2_state_event, fsx_create_event, fsx_delete_event, fsx_update_event

FS = "fs-0123456789abcdef0"
TOL = Decimal("1e-6")
FSX_PRICES = {"fsx_gb_month": {"PERSISTENT_2_125": "0.145"}}


def instance(instance_id: str, instance_type: str, job: str, **tags: str) -> dict[str, Any]:
    return {
        "instance_id": instance_id,
        "instance_type": instance_type,
        "tags": {"training-job": job, **tags},
    }


def run(instance_id: str, start: str, end: str) -> list[dict[str, Any]]:
    return [
        ec2_state_event(f"{instance_id}-run", instance_id, "running", start),
        ec2_state_event(f"{instance_id}-end", instance_id, "terminated", end),
    ]


def days(document: dict[str, Any]) -> list[tuple[str, str, str, Decimal]]:
    return [
        (s["date"], s["start"], s["end"], Decimal(s["total_usd"]))
        for s in document["daily_summaries"]
    ]


def test_seoul_job_across_15z_is_two_finance_days() -> None:
    document = replay(
        Scenario.model_validate(
            {
                "finance_timezone": "Asia/Seoul",
                "prices": {"ec2": {"trn1.32xlarge": "21.50"}},
                "instances": [instance("i-0a00000000000aa01", "trn1.32xlarge", "llama")],
                "events": run(
                    "i-0a00000000000aa01", "2026-11-01T13:00:00Z", "2026-11-01T17:00:00Z"
                ),
                "until": "2026-11-03T00:00:00Z",
            }
        )
    )
    assert days(document) == [
        ("2026-11-01", "2026-10-31T15:00:00Z", "2026-11-01T15:00:00Z", Decimal(43)),
        ("2026-11-02", "2026-11-01T15:00:00Z", "2026-11-02T15:00:00Z", Decimal(43)),
    ]
    assert {s["timezone"] for s in document["daily_summaries"]} == {"Asia/Seoul"}
    (job,) = document["jobs"]
    assert Decimal(job["cost_usd"]["total"]) == Decimal(86)
    messages = [m for m in document["messages"] if m["kind"] == "daily_summary"]
    assert [m["subject"] for m in messages] == [
        "ML training spend 2026-11-01: $43.00",
        "ML training spend 2026-11-02: $43.00",
    ]
    assert "on 2026-11-01 (Asia/Seoul)" in messages[0]["body"]
    # The daily summary ran at 00:15 Seoul time (15:15Z), for the day just closed.
    assert [m["at"] for m in messages] == ["2026-11-01T15:15:00Z", "2026-11-02T15:15:00Z"]


def test_new_york_daylight_saving_day_has_25_hours() -> None:
    document = replay(
        Scenario.model_validate(
            {
                "finance_timezone": "America/New_York",
                "prices": {"ec2": {"g5.xlarge": "2.00"}},
                "instances": [instance("i-0b00000000000bb01", "g5.xlarge", "sweep")],
                "events": run(
                    "i-0b00000000000bb01", "2026-11-01T03:00:00Z", "2026-11-02T06:00:00Z"
                ),
                "until": "2026-11-04T00:00:00Z",
            }
        )
    )
    assert days(document) == [
        ("2026-10-31", "2026-10-31T04:00:00Z", "2026-11-01T04:00:00Z", Decimal(2)),
        ("2026-11-01", "2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z", Decimal(50)),
        ("2026-11-02", "2026-11-02T05:00:00Z", "2026-11-03T05:00:00Z", Decimal(2)),
    ]


def _budget_alerts(zone: str | None) -> list[tuple[int, str, str]]:
    scenario: dict[str, Any] = {
        "prices": {"ec2": {"g5.xlarge": "10.00"}},
        "instances": [instance("i-0c00000000000cc01", "g5.xlarge", "eval", project="eval")],
        "budgets": [
            {
                "budget_id": "eval-month",
                "scope": {"tag": {"project": "eval"}},
                "amount_usd": "100",
                "period": "month",
                "thresholds": [50, 100],
            }
        ],
        "events": run("i-0c00000000000cc01", "2026-11-30T23:00:00Z", "2026-12-01T10:00:00Z"),
        "until": "2026-12-01T12:00:00Z",
    }
    if zone is not None:
        scenario["finance_timezone"] = zone
    document = replay(Scenario.model_validate(scenario))
    return [
        (a["threshold"], a["at"], a["alert_id"])
        for a in document["alerts"]
        if a["kind"] == "budget" and a["audience"] == "finance"
    ]


def test_month_budget_follows_the_new_york_month() -> None:
    alerts = _budget_alerts("America/New_York")
    assert [(t, at) for t, at, _ in alerts] == [
        (50, "2026-12-01T04:00:00Z"),  # November's: 5 h since 23:00Z
        (50, "2026-12-01T10:00:00Z"),  # December's: 5 h since its 05:00Z start
    ]
    assert [alert_id for *_, alert_id in alerts] == [
        "budget:eval-month:2026-11:50",
        "budget:eval-month:2026-12:50",
    ]
    utc = _budget_alerts(None)
    assert [(t, at) for t, at, _ in utc] == [
        (50, "2026-12-01T05:00:00Z"),
        (100, "2026-12-01T10:00:00Z"),
    ]


def _parquet(directory: Path, day: str) -> list[dict[str, Any]]:
    (found,) = [p for p in directory.rglob("*.parquet") if day.replace("-", "/") in str(p)]
    return read_columns(found.read_bytes(), COLUMN_NAMES, source=str(found))


def test_seoul_finance_day_focus_rows_split_at_the_utc_month_end(tmp_path: Path) -> None:
    document = replay(
        Scenario.model_validate(
            {
                "finance_timezone": "Asia/Seoul",
                "prices": {"ec2": {"trn1.32xlarge": "21.50"}, **FSX_PRICES},
                "instances": [instance("i-0d00000000000dd01", "trn1.32xlarge", "llama")],
                "events": [
                    *run("i-0d00000000000dd01", "2026-11-30T15:00:00Z", "2026-12-01T15:00:00Z"),
                    fsx_create_event(
                        "fs-c", FS, "2026-11-30T15:00:00Z", storage_gib=1200,
                        tags={"training-job": "llama"},
                    ),
                    fsx_delete_event("fs-d", FS, "2026-12-01T15:00:00Z"),
                ],
                "until": "2026-12-02T15:00:00Z",
            }
        ),
        focus_dir=tmp_path,
    )  # fmt: skip
    assert [d[0] for d in days(document)] == ["2026-12-01", "2026-12-02"]
    rows = _parquet(tmp_path, "2026-12-01")
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_kind.setdefault(row["x_ChargeKind"], []).append(row)
    periods = [
        (r["ChargePeriodStart"], r["ChargePeriodEnd"], r["BillingPeriodStart"])
        for r in sorted(by_kind["instance"], key=lambda r: r["ChargePeriodStart"])
    ]
    assert [(a.isoformat(), b.isoformat(), c.isoformat()) for a, b, c in periods] == [
        ("2026-11-30T15:00:00+00:00", "2026-12-01T00:00:00+00:00", "2026-11-01T00:00:00+00:00"),
        ("2026-12-01T00:00:00+00:00", "2026-12-01T15:00:00+00:00", "2026-12-01T00:00:00+00:00"),
    ]
    hours = sorted(Decimal(r["PricingQuantity"]) for r in by_kind["instance"])
    assert hours == [Decimal(9), Decimal(15)]
    fsx = sorted(by_kind["fsx_storage"], key=lambda r: r["ChargePeriodStart"])
    assert {r["ServiceName"] for r in fsx} == {"Amazon FSx"}
    assert {r["ResourceId"] for r in fsx} == {
        f"arn:aws:fsx:us-east-1:123456789012:file-system/{FS}"
    }
    # 1,200 GiB for 9 h of November (720 h) and 15 h of December (744 h).
    nov = Decimal(1200) * 9 / 720
    dec = Decimal(1200) * 15 / 744
    assert abs(Decimal(fsx[0]["PricingQuantity"]) - nov) < TOL
    assert abs(Decimal(fsx[1]["PricingQuantity"]) - dec) < TOL
    assert abs(Decimal(fsx[1]["BilledCost"]) - dec * Decimal("0.145")) < TOL
    total = sum((Decimal(r["BilledCost"]) for r in rows), Decimal(0))
    assert abs(total - Decimal(document["daily_summaries"][0]["total_usd"])) < TOL


def fsx_scenario(events: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"prices": FSX_PRICES, "events": events, "until": "2026-12-02T00:00:00Z"} | extra


def test_resized_file_system_across_a_month_end_in_job_totals_and_days() -> None:
    document = replay(
        Scenario.model_validate(
            fsx_scenario(
                [
                    fsx_create_event(
                        "c", FS, "2026-11-30T12:00:00Z", storage_gib=1200,
                        tags={"training-job": "llama", "project": "llama"},
                    ),
                    fsx_update_event("u", FS, "2026-11-30T18:00:00Z", storage_gib=2400),
                    fsx_delete_event("d", FS, "2026-12-01T06:00:00Z"),
                ]
            )
        )
    )  # fmt: skip
    p1 = Decimal(1200) * Decimal("0.145") * 6 / 720
    p2 = Decimal(2400) * Decimal("0.145") * 6 / 720
    p3 = Decimal(2400) * Decimal("0.145") * 6 / 744
    (job,) = document["jobs"]
    assert job["job_id"] == "llama"
    assert abs(Decimal(job["cost_usd"]["fsx"]) - (p1 + p2 + p3)) < TOL
    assert abs(Decimal(job["cost_usd"]["total"]) - (p1 + p2 + p3)) < TOL
    assert job["file_systems"] == [FS]
    assert "fsx_backups" in job["unconfirmed"]
    nov30, dec1 = document["daily_summaries"]
    assert abs(Decimal(nov30["fsx_usd"]) - (p1 + p2)) < TOL
    assert abs(Decimal(dec1["fsx_usd"]) - p3) < TOL
    assert nov30["by_tag"]["project"] == {"llama": nov30["total_usd"], "(none)": "0.000000000"}


def test_file_system_known_only_from_describe_is_costed_from_its_creation() -> None:
    """No CloudTrail event: the daily refresh (00:25Z) finds it with its creation time and
    its resize (an administrative action's request time) on 1 December, and its deletion
    (at its own time, from the scenario) on 2 December."""
    document = replay(
        Scenario.model_validate(
            fsx_scenario(
                [ec2_state_event("tick", "i-0e00000000000ee01", "pending", "2026-11-30T12:00:00Z")],
                until="2026-12-03T00:00:00Z",
                file_systems=[
                    {
                        "file_system_id": FS,
                        "deployment_type": "PERSISTENT_2",
                        "storage_gib": 1200,
                        "throughput_mb_s_per_tib": 125,
                        "tags": {"training-job": "llama"},
                        "created": "2026-11-30T12:00:00Z",
                        "deleted": "2026-12-01T06:00:00Z",
                        "changes": [{"at": "2026-11-30T18:00:00Z", "storage_gib": 2400}],
                    }
                ],
            )
        )
    )
    (job,) = [j for j in document["jobs"] if j["job_id"] == "llama"]
    expected = Decimal(1200) * Decimal("0.145") * 6 / 720 + Decimal(2400) * Decimal("0.145") * (
        Decimal(6) / 720 + Decimal(6) / 744
    )
    assert abs(Decimal(job["cost_usd"]["fsx"]) - expected) < TOL


def test_unknown_deployment_type_is_unpriced_and_untagged_file_system_left_out() -> None:
    document = replay(
        Scenario.model_validate(
            fsx_scenario(
                [
                    fsx_create_event(
                        "c1", FS, "2026-11-30T12:00:00Z", storage_gib=1200,
                        deployment_type="PERSISTENT_9", tags={"training-job": "odd"},
                    ),
                    fsx_create_event(
                        "c2", "fs-0fedcba9876543210", "2026-11-30T12:00:00Z", storage_gib=9600
                    ),
                ]
            )
        )
    )  # fmt: skip
    assert [j["job_id"] for j in document["jobs"]] == ["odd"]
    (odd,) = document["jobs"]
    assert odd["complete"] is False
    assert odd["unpriced"] == ["fsx:PERSISTENT_9_125:us-east-1"]
    assert odd["cost_usd"]["fsx"] == "0.000000000"
    assert [s["complete"] for s in document["daily_summaries"]] == [False, False]
    assert all(s["total_usd"] == "0.000000000" for s in document["daily_summaries"])
    assert document["rejected_events"] == []


def test_the_api_serves_an_fsx_job_key_for_key() -> None:
    """GET /jobs/{id}'s response model keeps ``cost_usd.fsx`` and ``file_systems``."""
    import json

    from pydantic import TypeAdapter

    from costtracker.replay import replay_session
    from shared.api.models.jobs import JobDetail
    from shared.app import runtime
    from shared.reports.views import job_detail
    from shared.services.job_view import get_job_cost

    scenario = Scenario.model_validate(
        fsx_scenario(
            [
                fsx_create_event(
                    "c", FS, "2026-11-30T12:00:00Z", storage_gib=1200,
                    tags={"training-job": "llama"},
                )
            ]
        )
    )  # fmt: skip
    with replay_session(scenario) as replayer:
        replayer.run()
        cost = get_job_cost(runtime.ledger_deps(), "llama", replayer.clock.now())
        document = job_detail(cost)
    served = TypeAdapter(JobDetail).dump_python(
        JobDetail.model_validate(document), mode="json", by_alias=True
    )
    assert served["cost_usd"]["fsx"] == document["cost_usd"]["fsx"]
    # 12 h of November (720 h) and 24 h of December (744 h) at 1,200 GiB x $0.145.
    expected = Decimal(1200) * Decimal("0.145") * (Decimal(12) / 720 + Decimal(24) / 744)
    assert abs(Decimal(served["cost_usd"]["fsx"]) - expected) < TOL
    assert served["file_systems"] == [FS]
    assert json.loads(json.dumps(document)) == served


def test_a_budget_counts_the_fsx_charge() -> None:
    """1,200 GiB x $0.145 a month = $174/month = $0.241666.../h in November: a $1 budget
    of the job crosses 50 % ($0.50) 2 h 4 min 8.3 s after creation and 100 % after
    4 h 8 min 16.6 s. The forecast predicts both (a steady accrual), so each alert is at
    its crossing, rounded up to the second: 14:04:09 and 16:08:17."""
    document = replay(
        Scenario.model_validate(
            fsx_scenario(
                [
                    fsx_create_event(
                        "c", FS, "2026-11-30T12:00:00Z", storage_gib=1200,
                        tags={"training-job": "llama"},
                    ),
                    fsx_delete_event("d", FS, "2026-11-30T20:00:00Z"),
                ],
                budgets=[{"budget_id": "llama-fsx", "scope": {"job": "llama"},
                          "amount_usd": "1", "thresholds": [50, 100]}],
            )
        )
    )  # fmt: skip
    crossed = [
        (a["threshold"], a["at"])
        for a in document["alerts"]
        if a["kind"] == "budget" and a["audience"] == "finance"
    ]
    assert crossed == [(50, "2026-11-30T14:04:09Z"), (100, "2026-11-30T16:08:17Z")]
