"""The dashboard in headless Chromium (Debian's package, driven by Playwright).

Each view is loaded from a real ``costtracker demo`` (the two-team fortnight example,
budgets set after the replay) and must show the figures the API returns for the same
jobs, to the cent, with no console error (the layout at 390, 1280 and 1440 px, and the
screenshots: test_dashboard_layout.py). Without Chromium the module skips.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from costtracker.render.text import per_unit, rate
from tests.browser.support import View, api, cents, running_demo, signed, unit


def test_now_shows_running_jobs_and_idle_accelerators(browser: Any, demo: str) -> None:
    running = api(demo, "/jobs?status=running&limit=100")["jobs"]
    idle = api(demo, "/idle")["instances"]
    assert {j["job_id"] for j in running} == {"llama-pretrain", "vit-eval"}
    view = View(browser, demo).open("#/now")
    assert view.fig("now:running") == "2"
    for job in running:
        assert view.fig(f"job:{job['job_id']}:total") == cents(job["cost_usd"]["total"])
        assert view.fig(f"job:{job['job_id']}:burn") == unit(job["burn_rate_usd_per_hour"]) + "/h"
        assert view.fig(f"job:{job['job_id']}:risk") == cents(job["spend_at_risk_usd"])
    burn = sum(Decimal(j["burn_rate_usd_per_hour"]) for j in running)
    assert view.fig("now:burn") == unit(burn) + "/h"
    assert view.fig("now:risk") == cents(sum(Decimal(j["spend_at_risk_usd"]) for j in running))
    assert [i["instance_id"] for i in idle] == ["i-0c200000000000c02"]
    assert view.fig("idle:i-0c200000000000c02:cost") == cents(idle[0]["cost_usd"]) == "$32.25"
    assert "2026-11-16 10:30 UTC" in view.page.locator('[data-table="idle"]').inner_text()
    assert (
        "override (checked 2026-11-02)"
        in view.page.locator('[data-role="provenance"]').inner_text()
    )
    assert view.page.locator(".badge.estimated").count() >= 3
    view.close()


def test_a_job_splits_its_cost_and_marks_its_events(browser: Any, demo: str) -> None:
    job = api(demo, "/jobs/llama-sft")
    timeline = api(demo, "/jobs/llama-sft/timeline?points=160")["points"]
    estimate = api(demo, "/jobs/llama-sft/estimate?target_steps=200000")
    view = View(browser, demo).open("#/job/llama-sft?target=200000")
    for fig, key in (
        ("total", "total"),
        ("instance", "instance"),
        ("ebs", "ebs"),
        ("storage", "checkpoint_storage"),
        ("idle", "wasted_idle"),
        ("rerun", "wasted_rerun"),
    ):
        assert view.fig(f"job:{fig}") == cents(job["cost_usd"][key]), fig
    assert view.fig("job:per1k") == unit(job["cost_per_1k_steps_usd"])
    assert view.fig("job:per1m") == unit(job["cost_per_million_tokens_usd"])
    assert (
        view.fig("job:timeline-total")
        == cents(timeline[-1]["total_usd"])
        == cents(job["cost_usd"]["total"])
    )
    low, high = estimate["cost_usd"]["low"], estimate["cost_usd"]["high"]
    assert view.fig("estimate:cost") == f"{cents(low)} \u2013 {cents(high)}"
    assert view.page.locator('[data-mark="idle"]').count() == 1
    assert view.page.locator('[data-mark="checkpoint"]').count() == job["checkpoint_objects"]
    for series in ("instance_usd", "ebs_usd", "checkpoint_storage_usd"):
        assert view.page.locator(f'polygon[data-series="{series}"]').count() == 1
    view.open("#/job/vit-spot")
    spot = api(demo, "/jobs/vit-spot")
    assert view.fig("job:rerun") == cents(spot["cost_usd"]["wasted_rerun"])
    assert view.page.locator('[data-mark="interruption"]').count() == spot["interruptions"] == 1
    view.close()


def test_trainium_against_gpu(browser: Any, demo: str) -> None:
    body = api(demo, "/compare?jobs=llama-sft,llama-sft-gpu")
    view = View(browser, demo).open("#/compare?jobs=llama-sft,llama-sft-gpu")
    for row in body["jobs"]:
        job = row["job_id"]
        assert view.fig(f"cmp:{job}:total") == cents(row["total_usd"])
        assert view.fig(f"cmp:{job}:per1k") == unit(row["cost_per_1k_steps_usd"])
        assert view.fig(f"cmp:{job}:per1m") == unit(row["cost_per_million_tokens_usd"])
        assert view.fig(f"cmp:{job}:idle") == cents(row["wasted_idle_usd"])
    text = view.page.locator('[data-table="compare"]').inner_text()
    assert "Neuron (Trainium/Inferentia)" in text and "NVIDIA GPU" in text
    view.close()


def test_spend_by_day_stacked_by_team(browser: Any, demo: str) -> None:
    body = api(demo, "/summaries?from=2026-11-02&to=2026-11-15&group_by=team")
    days = [d for d in body["days"] if d["available"]]
    assert len(days) == 14
    view = View(browser, demo).open("#/spend?group_by=team&from=2026-11-02&to=2026-11-15")
    for day in days:
        assert view.fig(f"day:{day['date']}:total") == cents(day["total_usd"])
    total = sum(Decimal(d["total_usd"]) for d in days)
    tagged = sum(Decimal(v) for d in days for k, v in d["by_tag"].items() if k != "(none)")
    assert view.fig("spend:total") == cents(total)
    assert view.fig("spend:notag") == cents(total - tagged)
    # The API's (none) entry is that residual, day by day (every breakdown adds up).
    none = sum(Decimal(d["by_tag"].get("(none)", "0")) for d in days)
    assert cents(none) == cents(total - tagged)
    assert view.page.locator('rect[data-series="(none)"]').count() == 0
    assert view.fig("spend:untagged") == cents(sum(Decimal(d["untagged_usd"]) for d in days))
    assert view.page.locator('rect[data-series="nlp"]').count() > 0
    # the last day's untagged GPU misses every required tag
    assert "i-0e100000000000e01" in view.page.locator('[data-table="compliance"]').inner_text()
    view.close()


def test_budgets_against_thresholds(browser: Any, demo: str) -> None:
    budgets = api(demo, "/budgets")["budgets"]
    assert {b["budget_id"] for b in budgets} == {"nlp-monthly", "vision-monthly", "account-total"}
    view = View(browser, demo).open("#/budgets")
    for b in budgets:
        assert view.fig(f"budget:{b['budget_id']}:spend") == cents(b["spend_usd"])
        assert view.fig(f"budget:{b['budget_id']}:amount") == cents(b["amount_usd"])
    assert view.page.locator('[data-mark="threshold-80"]').count() == 3
    assert view.page.locator('[data-series="forecast"]').count() == 3
    assert view.page.locator('[data-series="forecast-range"]').count() == 3
    for b in budgets:  # one forecast: the total, its range and the same 100 % crossing
        forecast = f"{cents(b['projected_total_usd'])} ({cents(b['projected_low_usd'])} to "
        assert view.fig(f"budget:{b['budget_id']}:forecast").startswith(forecast)
        hundred = next(c for c in b["forecast"]["crossings"] if c["threshold"] == 100)
        words = view.fig(f"budget:{b['budget_id']}:crossing")
        if Decimal(b["projected_total_usd"]) < Decimal(b["amount_usd"]):
            assert hundred["state"] in ("not_projected", "possible"), b
            assert words.startswith("not projected"), words
        else:
            assert hundred["state"] in ("crossed", "projected") and "not" not in words
    view.close()


def test_why_did_it_change_matches_the_hand_calculation(browser: Any, demo: str) -> None:
    # Team nlp, week of Nov 2 against week of Nov 9 (docs/efficiency.md): llama-sft 896 ->
    # 1,344 accelerator-hours at $1.34375, 56,000 -> 72,000 steps; llama-sft-gpu week 2 only.
    query = "from0=2026-11-02&to0=2026-11-08&from1=2026-11-09&to1=2026-11-15&team=nlp"
    body = api(demo, f"/change?{query}")
    change = body["change"]
    exact = {j["job_id"]: j["change"]["exact"] for j in body["by_job"]}
    assert abs(Decimal(exact["llama-sft"]["use_usd"]) - Decimal("373.1302220578")) < Decimal(
        "1e-9"
    )  # 602 ln(9/7) / ln(3/2)
    assert abs(Decimal(exact["llama-sft"]["efficiency_usd"]) - Decimal("228.8697779422")) < Decimal(
        "1e-9"
    )  # 602 ln(7/6) / ln(3/2)
    parts = [Decimal(change[f"{k}_usd"]) for k in ("use", "efficiency", "price", "other")]
    assert sum(parts) == Decimal(change["total_usd"])
    assert change["wasted_idle_usd"] == "247.250000000"  # 11.5 h idle x 21.50
    view = View(browser, demo).open(f"#/change?{query}")
    for part in ("use", "efficiency", "price", "other"):
        assert view.fig(f"change:{part}") == signed(change[f"{part}_usd"]), part
    assert view.fig("change:efficiency") == "+$228.87"
    assert view.fig("change:wasted") == "+$247.25"
    assert view.fig("change:total") == cents(change["total_usd"])
    assert view.fig("change:llama-sft:price") == "$0.00"
    assert view.fig("change:accelerator_hours:0") == "896.00"
    assert view.fig("change:accelerator_hours:1") == f"{1344 + 80:,}.00"
    assert view.errors == []
    view.shot("change")
    view.close()


def test_efficiency_of_a_team_a_job_and_now(browser: Any, demo: str) -> None:
    body = api(demo, "/efficiency?team=nlp&from=2026-11-03&to=2026-11-16")
    view = View(browser, demo).open("#/efficiency?team=nlp&from=2026-11-03&to=2026-11-16")
    assert view.fig("team:acch") == f"{Decimal(body['totals']['accelerator_hours']):,.1f}"
    assert view.fig("team:llama-sft:acch") == "2,240.0"
    assert view.fig("team:llama-sft:util") == "not measured"  # no datapoint, never 100 %
    assert view.fig("team:llama-sft:peracch") == "$1.344"
    view.shot("efficiency")
    job = api(demo, "/jobs/llama-sft/efficiency")
    view.open("#/job/llama-sft")
    assert view.fig("eff:acch") == "2,240.0"
    assert view.fig("eff:util") == "not measured"
    assert view.fig("eff:retries") == str(job["interruptions"])
    assert view.page.locator('[data-series="storage"]').count() == 1
    assert f"{Decimal(job['storage_gb'][-1]['gb']):,.2f} GB" in view.fig("eff:storage")
    view.open("#/now")
    assert view.page.locator('[data-table="now-efficiency"]').count() == 1
    row = api(demo, "/compare?jobs=llama-sft,llama-sft-gpu")["jobs"][0]
    view.open("#/compare?jobs=llama-sft,llama-sft-gpu")
    pace = f"{Decimal(row['steps_per_hour']):,.1f} steps/h, "
    assert (
        view.fig("cmp:llama-sft:pace")
        == pace + f"{Decimal(row['tokens_per_second']):,.0f} tokens/s"
    )
    assert view.errors == []
    view.close()


def test_a_days_summary_names_spend_without_each_key(browser: Any, demo: str) -> None:
    summary = api(demo, "/summaries/2026-11-10")
    view = View(browser, demo).open("#/day/2026-11-10")
    for key, values in summary["by_tag"].items():
        assert view.fig(f"daysum:{key}:(none)") == cents(values["(none)"]), key
    days = summary["trailing_mean_days"]
    assert days >= 1
    assert f"previous {days} day" in view.page.locator("main").inner_text()
    assert view.errors == []
    view.shot("day-summary")
    view.close()
    view.close()


def test_a_team_member_sees_only_their_team(browser: Any) -> None:
    with running_demo("--as", "team:nlp") as base:
        view = View(browser, base)
        for fragment in ("#/now", "#/jobs?days=30"):
            text = view.open(fragment).page.locator("main").inner_text()
            assert "llama-sft" in text or "llama-pretrain" in text
            assert "vit-" not in text and "vision" not in text
        view.close()


RATES = ("0.041234567", "0.000123000", "0.005", "218.9", "1313.265000000", "21.957642000",
         "0", "-12.34567", "1234567.891", "55.04")  # fmt: skip


def test_rates_keep_their_precision_as_in_the_cli(browser: Any, demo: str) -> None:
    """$/1M tokens of a cheap run is not rounded to cents: the page's perUnit and exactUsd
    are the CLI's per_unit and rate (a negative amount reads -$, as everywhere on the page)."""
    view = View(browser, demo).open("#/now")
    for value in RATES:
        cli_unit, cli_rate = (x.replace("$-", "-$") for x in (per_unit(value), rate(value)))
        assert view.page.evaluate("(v) => perUnit(v)", value) == cli_unit, value
        assert view.page.evaluate("(v) => exactUsd(v)", value) == cli_rate, value
    assert view.page.evaluate("() => perUnit('0.041234567')") == "$0.04123"  # not $0.04
    view.close()
