"""Every figure the dashboard shows says what it is (headless Chromium on the demo).

A running job's open segments show their hours and cost accrued to the as-of moment; an
incomplete total reads "at least $X" and names what is missing; a job's status (the
words people read: ``complete`` is "finished") is apart from whether its cost is
complete; spend at risk is shown for running jobs only; every view names its price
sources and their dates and warns when they were checked long before the data; and the
demo says its data is a scenario's, as of that scenario's end.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import pytest

from tests.browser.support import View, api, cents
from tests.browser.test_dashboard_layout import VIEWS

DEMO_AS_OF = "2026-11-16 12:00 UTC"  # two-teams-fortnight.json's `until`


@pytest.mark.parametrize("name", VIEWS)
def test_every_view_says_whose_data_and_which_prices(browser: Any, demo: str, name: str) -> None:
    view = View(browser, demo).open(VIEWS[name])
    view.page.wait_for_selector("#context:not([hidden])", timeout=10_000)
    context = view.page.locator("#context").inner_text()
    assert f"Demo data as of {DEMO_AS_OF}" in context and "two-teams-fortnight.json" in context
    provenance = view.page.locator('[data-role="provenance"]').first.inner_text()
    assert "(checked 2026-11-02)" in provenance, provenance  # the scenario's overrides
    # EBS and storage come from the bundled snapshot, checked 350 days before the data
    # (349 before Spend's, whose data ends with the last whole day; 345 before the day
    # view's, a summary computed on 2026-11-11 at 00:15).
    stale = view.page.locator('[data-role="stale-prices"]').first.inner_text()
    found = re.search(r"bundled snapshot \(checked 2025-12-01\), (\d+) days before", stale)
    expected = {"spend": 349, "day": 345}.get(name, 350)
    assert found and int(found.group(1)) == expected, stale
    view.close()


def test_a_fresh_price_gets_no_warning(browser: Any, demo: str) -> None:
    view = View(browser, demo).open("#/now")
    count = view.page.evaluate(
        "() => provenance('2026-11-16T12:00:00Z', ['override:2026-11-02', 'snapshot:2026-09-01'])"
        ".querySelectorAll('[data-role=stale-prices]').length"
    )
    assert count == 0
    view.close()


def test_a_running_jobs_open_segments_show_hours_and_cost_so_far(browser: Any, demo: str) -> None:
    job = api(demo, "/jobs/llama-pretrain")
    assert job["status"] == "running"
    view = View(browser, demo).open("#/job/llama-pretrain")
    opened = 0
    for instance in job["instances"]:
        for segment in instance["segments"]:
            if segment["state"] != "open":
                continue
            opened += 1
            # The API accrues an open segment to its as-of moment (cost rule 9).
            assert segment["priced"] and segment["cost_usd"] is not None
            assert segment["billed_seconds"] > 0
            iid = instance["instance_id"]
            hours = f"{Decimal(segment['billed_seconds']) / 3600:.2f}"
            assert view.fig(f"segment:{iid}:hours") == hours
            assert view.fig(f"segment:{iid}:open") == f"{cents(segment['cost_usd'])} so far"
    assert opened == 2
    # 12 h at $21.50/h since midnight: the instance's whole cost is its open segment's.
    first = job["instances"][0]
    assert first["segments"][0]["cost_usd"] == first["instance_usd"] == "258.000000000"
    row = view.page.locator('[data-table="segments"] tr[data-row^="open:"]').first.inner_text()
    assert "unpriced" not in row and "0.00" not in row.split()
    view.close()


def test_status_is_in_peoples_words_and_apart_from_completeness(browser: Any, demo: str) -> None:
    assert api(demo, "/jobs/vit-spot")["status"] == "complete"  # JSON keeps the contract's word
    view = View(browser, demo).open("#/jobs?days=30")
    row = view.page.locator('[data-table="jobs"] tr[data-row="vit-spot"]')
    assert row.locator('[data-role="status"]').inner_text() == "finished"
    assert row.locator(".badge.priced").inner_text() == "fully priced"
    running = view.page.locator('[data-table="jobs"] tr[data-row="llama-pretrain"]')
    assert running.locator('[data-role="status"]').inner_text() == "running"
    words = view.page.locator('[data-table="jobs"] [data-role="status"]').all_inner_texts()
    assert "complete" not in words and "finished" in words
    view.open("#/job/vit-spot")
    assert view.page.locator('h2 [data-role="status"]').inner_text() == "finished"
    view.close()


def test_spend_at_risk_is_shown_for_running_jobs_only(browser: Any, demo: str) -> None:
    running = api(demo, "/jobs/llama-pretrain")
    view = View(browser, demo).open("#/job/llama-pretrain")
    assert view.fig("job:risk") == cents(running["spend_at_risk_usd"]) == "$86.00"
    for finished in ("vit-spot", "llama-sft-gpu", "llama-sft"):
        assert api(demo, f"/jobs/{finished}")["status"] != "running"
        view.open(f"#/job/{finished}")
        assert view.page.locator('[data-fig="job:risk"]').count() == 0, finished
        assert "Spend at risk" not in view.page.locator("main").inner_text()
    view.close()


def test_an_incomplete_total_reads_at_least_and_names_what_is_missing(
    browser: Any, demo: str
) -> None:
    """The bundled example prices every second, so this renders an incomplete job as the
    API shapes one (``complete: false`` with its ``unpriced`` keys)."""
    view = View(browser, demo).open("#/jobs")
    job = {
        "status": "complete",
        "complete": False,
        "unpriced": ["ec2:trn2.48xlarge:us-east-1"],
        "cost_usd": {"total": "1313.123456789"},
    }
    assert view.page.evaluate("(j) => jobTotal(j)", job) == "at least $1,313.12"
    badge = view.page.evaluate("(j) => completeness(j).textContent", job)
    assert badge == "incomplete: no ec2 price of trn2.48xlarge in us-east-1 yet"
    assert view.page.evaluate("(j) => statusBadge(j).textContent", job) == "finished"
    view.close()
