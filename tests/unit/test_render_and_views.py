"""Human output says what its figures are; the comparison's notes; one tokens parser."""

from __future__ import annotations

from typing import Any

import pytest

from costtracker.render import analysis, jobs, text
from shared.api.errors import from_validation_errors
from shared.domain.tags import tokens_per_step
from shared.reports.compare import _compare_notes


def job(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "job_id": "llama-run", "tags": {"team": "nlp"}, "status": "running",
        "cost_usd": {"total": "120.5", "instance": "118", "ebs": "2.5",
                     "checkpoint_storage": "0", "wasted_rerun": "0", "wasted_idle": "0"},
        "instance_seconds": 7200, "wall_clock_seconds": 3600, "checkpoints": 2,
        "interruptions": 0, "unconfirmed": ["data_transfer"], "estimated": True,
        "complete": True, "as_of": "2026-11-01T12:00:00Z",
        "burn_rate_usd_per_hour": "43.000000000", "spend_at_risk_usd": "12.000000000",
        "last_checkpoint_step": 500, "cost_per_1k_steps_usd": "241.000000000",
        "cost_per_million_tokens_usd": "0.012345678",
        "instances": [],
    }  # fmt: skip
    base.update(changes)
    return base


def test_burn_rate_and_spend_at_risk_only_for_a_running_job() -> None:
    assert "burning $43.00/h" in jobs.job_show(job())
    assert "at risk since the last checkpoint $12.00" in jobs.job_show(job())
    for status in ("stopped", "interrupted", "complete"):
        out = jobs.job_show(job(status=status))
        assert "burning" not in out and "at risk" not in out


def test_units_are_labelled_and_derived_figures_keep_their_precision() -> None:
    out = jobs.job_show(job())
    assert "1.00 h wall clock, 2.00 instance-hours" in out
    assert "$0.01235 per 1M tokens" in out  # not $0.01


def test_an_incomplete_job_is_at_least_with_the_missing_price_named() -> None:
    missing = "unpriced:ec2:trn2.48xlarge:us-east-1"
    unpriced = job(complete=False, unconfirmed=["data_transfer", missing])
    out = jobs.job_show(unpriced)
    assert "incomplete" in out and "at least $120.50" in out
    assert "no ec2 price for trn2.48xlarge in us-east-1" in out
    table = jobs.job_table({"jobs": [unpriced], "as_of": "2026-11-01T12:00:00Z"})
    assert "at least $120.50" in table and "trn2.48xlarge" in table
    listed = jobs.job_list({"jobs": [unpriced], "from": "2026-11-01", "to": "2026-11-01"})
    assert "at least $120.50" in listed and "incomplete" in listed


def test_complete_is_never_a_bare_word() -> None:
    finished = job(status="complete")
    for out in (
        jobs.job_show(finished),
        jobs.job_table({"jobs": [finished], "as_of": "2026-11-01T12:00:00Z"}),
        jobs.job_list({"jobs": [finished], "from": "2026-11-01", "to": "2026-11-01"}),
    ):
        assert "finished" in out and "complete" not in out.replace("incomplete", "")


@pytest.mark.parametrize(
    ("value", "shown"),
    [("0.096000000", "$0.096"), ("21.500000000", "$21.50"), ("1.34375", "$1.34375"),
     ("21.957642", "$21.957642"), ("1000", "$1,000.00")],
)  # fmt: skip
def test_rates_to_their_real_precision(value: str, shown: str) -> None:
    assert text.rate(value) == shown


def test_a_wide_comparison_wraps_into_blocks_and_drops_no_job() -> None:
    rows = [
        {"job_id": f"a-rather-long-job-identifier-number-{n}", "status": "running",
         "accelerators": ["NVIDIA GPU"], "instance_types": ["p5.48xlarge"],
         "lifecycle": "spot", "complete": True, "steps": 100, "tokens_per_step": 10,
         "total_usd": "10", "cost_per_step_usd": "0.1", "cost_per_million_tokens_usd": "1",
         "usd_per_hour": "1", "usd_per_instance_hour": "1", "wall_clock_hours": "1",
         "instance_hours": "1", "utilization": "1.000", "wasted_idle_usd": "0",
         "wasted_rerun_usd": "0", "interruptions": 0}
        for n in range(5)
    ]  # fmt: skip
    out = analysis.compare({"jobs": rows, "notes": []})
    for row in rows:
        assert row["job_id"] in out  # full ids, every job
    assert max(len(line) for line in out.splitlines()) <= 80


def test_tables_wrap_cells_rather_than_cut_them() -> None:
    long = "s3://bucket/" + "k" * 120
    out = text.table([("A", "B"), ("x", long)])
    assert "".join(line[3:].strip() for line in out.splitlines()[1:]) == long
    assert max(len(line) for line in out.splitlines()) <= 80


def _row(job_id: str, **changes: Any) -> dict[str, Any]:
    base = {"job_id": job_id, "accelerators": ["NVIDIA GPU"], "instance_types": ["p5.48xlarge"],
            "lifecycle": "on-demand", "running": False, "steps": 1000, "tokens_per_step": 8,
            "utilization": "1.000", "wasted_idle_usd": "0", "wasted_rerun_usd": "0",
            "complete": True}  # fmt: skip
    base.update(changes)
    return base


def test_same_jobs_need_no_note_and_every_difference_gets_one() -> None:
    assert _compare_notes([_row("a"), _row("b")]) == []
    notes = " ".join(
        _compare_notes(
            [
                _row("a", accelerators=["Neuron (Trainium/Inferentia)"],
                     instance_types=["trn1.32xlarge"]),
                _row("b", lifecycle="spot", running=True, steps=2000, tokens_per_step=16,
                     utilization="0.800", wasted_idle_usd="5", complete=False),
            ]
        )
    )  # fmt: skip
    for words in ("different accelerators", "spot and on-demand differ", "b is still running",
                  "different progress", "tokens per step differ", "idle time and reruns",
                  "b has unpriced time"):  # fmt: skip
        assert words in notes, words


@pytest.mark.parametrize(
    ("value", "tokens"),
    [("524288", 524288), ("1,024", None), ("4k", None), ("2.5e6", None), ("-1", None),
     ("0", None), (" 12", None), ("١٢", None), ("", None), (None, None), ("9" * 20, None)],
)  # fmt: skip
def test_one_tokens_per_step_parser_digits_only(value: str | None, tokens: int | None) -> None:
    assert tokens_per_step(value) == tokens


def test_validation_errors_name_the_field_never_the_input() -> None:
    problem = from_validation_errors(
        [{"loc": ("query", "limit"), "msg": "Input should be greater than or equal to 1",
          "type": "greater_than_equal", "input": "SECRET-INPUT"},
         {"loc": ("body",), "msg": "JSON decode error", "type": "json_invalid",
          "input": "{SECRET"}]
    )  # fmt: skip
    body = problem.body()
    assert body["statusCode"] == 400 and body["field"] == "limit"
    assert body["message"] == "limit: Input should be greater than or equal to 1 (and 1 more)"
    assert "SECRET" not in str(body)
