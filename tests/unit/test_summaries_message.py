"""The daily summary's message and CLI view: ``(none)`` named for every key, the mean
labelled with its number of days, the instances missing tags named up to a bound, and the
CSV's estimated/confirmed column (``shared.services.summaries``)."""

from __future__ import annotations

import csv
import io
from typing import Any

from costtracker.render.reports import summary as summary_view
from shared.domain.limits import TOP_ITEMS
from shared.services.summaries import summary_alert, summary_csv


def a_summary(**changes: Any) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "date": "2026-11-05",
        "timezone": "Europe/Paris",
        "total_usd": "300.000000000",
        "complete": True,
        "by_tag": {"team": {"nlp": "200.000000000", "(none)": "100.000000000"},
                   "project": {"llama": "300.000000000", "(none)": "0E-9"}},
        "by_job": {"a": "200.000000000", "b": "100.000000000"},
        "top_jobs": [{"job_id": "a", "total_usd": "200.000000000"},
                     {"job_id": "b", "total_usd": "100.000000000"}],
        "untagged_usd": "0", "untagged_instances": [], "tag_compliance": [],
        "change_vs_previous_day_usd": "50.000000000",
        "trailing_mean_usd": "250.000000000", "trailing_mean_days": 3,
        "wasted_rerun_usd": "0", "wasted_idle_usd": "0", "checkpoint_storage_usd": "0",
        "estimated": True, "as_of": "2026-11-06T00:15:00Z",
    }  # fmt: skip
    return {**summary, **changes}


def test_every_key_names_its_spend_without_the_key_last() -> None:
    body = summary_alert(a_summary()).message.splitlines()
    assert "By project: llama $300.00, (none) $0.00" in body
    assert "By team: nlp $200.00, (none) $100.00" in body


def test_the_mean_says_over_how_many_days() -> None:
    assert "Daily mean of the previous 3 days: $250.00" in summary_alert(a_summary()).message
    one = summary_alert(a_summary(trailing_mean_days=1)).message
    assert "Daily mean of the previous 1 day: $250.00" in one
    none = summary_alert(a_summary(trailing_mean_usd=None, trailing_mean_days=0)).message
    assert "mean" not in none


def test_instances_missing_tags_are_named_up_to_a_bound() -> None:
    many = [{"instance_id": f"i-{n:017x}", "job_id": "a", "missing": ["team"]} for n in range(45)]
    body = summary_alert(a_summary(tag_compliance=many, counts={"tag_compliance": 45})).message
    (line,) = [x for x in body.splitlines() if x.startswith("Instances missing required tags")]
    assert line.count("(team)") == TOP_ITEMS
    assert line.endswith(f"and {45 - TOP_ITEMS} more (GET /summaries/2026-11-05)")
    assert f"i-{0:017x} (team)" in line and f"i-{TOP_ITEMS:017x}" not in line


def test_the_cli_view_shows_none_rows_the_mean_and_the_instances() -> None:
    missing = [{"instance_id": "i-0abc", "job_id": "b", "missing": ["team", "owner"]}]
    out = summary_view(a_summary(tag_compliance=missing))
    lines = [line.split() for line in out.splitlines()]
    assert out.startswith("Daily summary 2026-11-05 (Europe/Paris): $300.00, ")
    assert "estimated" in out.splitlines()[0]
    assert ["(none)", "$0.00"] in lines and ["(none)", "$100.00"] in lines
    assert "daily mean of the previous 3 days: $250.00" in out
    assert ["i-0abc", "b", "team,", "owner"] in lines


def test_the_csv_carries_estimated_or_confirmed() -> None:
    rows = list(csv.DictReader(io.StringIO(summary_csv(a_summary()))))
    assert {r["basis"] for r in rows} == {"estimated"}
    assert ("tag:project", "(none)", "0E-9") in {(r["group"], r["value"], r["usd"]) for r in rows}
    confirmed = list(csv.DictReader(io.StringIO(summary_csv(a_summary(estimated=False)))))
    assert {r["basis"] for r in confirmed} == {"confirmed"}


def test_the_change_vs_the_day_before_carries_its_sign_before_the_dollar() -> None:
    assert "Change vs the day before: +$50.00" in summary_alert(a_summary()).message
    fell = summary_alert(a_summary(change_vs_previous_day_usd="-1562.5")).message
    assert "Change vs the day before: -$1,562.50" in fell
