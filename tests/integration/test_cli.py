"""The CLI against the local API (the demo's): readable in 80 columns, --json stable."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from costtracker.cli import main
from costtracker.demo import store_reported_summaries
from costtracker.local_api import serve
from costtracker.replay import replay_session, report
from costtracker.scenario import load_scenario

EXAMPLE = Path(__file__).resolve().parents[2] / "costtracker" / "examples" / "llama-lora-vs-p5.json"


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with replay_session(load_scenario(EXAMPLE)) as replayer:
        replayer.run()
        store_reported_summaries(report(replayer))  # as the demo does
        server = serve("127.0.0.1", 0)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        yield f"http://127.0.0.1:{server.server_address[1]}"
        server.shutdown()
        server.server_close()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_jobs_show_fits_80_columns(endpoint: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = run(capsys, "jobs", "show", "llama3-8b-lora", "--endpoint", endpoint)
    assert "Job llama3-8b-lora" in out and "$1,313.27" in out
    assert max(len(line) for line in out.splitlines()) <= 80
    # Rule 10 measured for part of the run, rule 11's warm-up to the first checkpoint.
    assert "accelerator-hours" in out and "of the time measured" in out and "warm-up" in out


def test_json_output_is_the_apis_document_with_sorted_keys(
    endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    first = run(capsys, "jobs", "show", "llama3-8b-lora", "--endpoint", endpoint, "--json")
    second = run(capsys, "jobs", "show", "llama3-8b-lora", "--endpoint", endpoint, "--json")
    assert first == second
    document = json.loads(first)
    assert list(document) == sorted(document)
    assert document["cost_usd"]["total"] == "1313.267983726"


def test_ls_compare_and_prices(endpoint: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = run(
        capsys, "jobs", "ls", "--from", "2026-11-01", "--to", "2026-11-02", "--endpoint", endpoint
    )
    assert "llama3-8b-lora-gpu-baseline" in out and "INST-H" in out
    out = run(
        capsys,
        "jobs",
        "ls",
        "--from",
        "2026-11-01",
        "--owner",
        "ben",
        "--sort",
        "start",
        "--endpoint",
        endpoint,
    )
    assert "llama3-8b-lora-gpu-baseline" in out and "llama3-8b-lora " not in out
    out = run(capsys, "prices", "trn1.32xlarge", "--endpoint", endpoint)
    assert "$21.50/h list" in out and "snapshot" in out
    out = run(capsys, "prices", "m5.large", "--endpoint", endpoint)
    assert "$0.096/h list" in out and "override" in out


def test_the_demo_compare_supports_a_decision(
    endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bundled demo: the same fine-tune to the same step on Trainium and on a GPU,
    $/step and $/1M tokens for both, full ids, notes on what differs."""
    document = json.loads(
        run(
            capsys,
            "jobs",
            "compare",
            "llama3-8b-lora",
            "llama3-8b-lora-gpu-baseline",
            "--endpoint",
            endpoint,
            "--json",
        )
    )
    trn, gpu = document["jobs"]
    for job in (trn, gpu):
        assert job["steps"] == 6000 and job["tokens_per_step"] == 262144
        assert job["cost_per_step_usd"] and job["cost_per_million_tokens_usd"]
    per_million = Decimal(trn["total_usd"]) * 10**6 / (6000 * 262144)
    assert abs(Decimal(trn["cost_per_million_tokens_usd"]) - per_million) < Decimal("1e-6")
    assert (trn["lifecycle"], gpu["lifecycle"]) == ("on-demand", "spot")
    notes = " ".join(document["notes"])
    assert "different accelerators" in notes and "spot and on-demand differ" in notes
    assert "CPU instances" in notes
    out = run(
        capsys,
        "jobs",
        "compare",
        "llama3-8b-lora",
        "llama3-8b-lora-gpu-baseline",
        "--endpoint",
        endpoint,
    )
    assert "llama3-8b-lora-gpu-baseline" in out  # the full id
    assert "Neuron" in out and "NVIDIA" in out and "note:" in out
    for label in (
        "$/step",
        "$/1M tokens",
        "$/h (wall clock)",
        "wall clock",
        "instance-hours",
        "$/accelerator-hour",
        "utilization",
        "measured share",
        "idle waste",
        "rerun waste",
        "pricing model",
    ):
        assert label in out, label
    dollars = [line for line in out.splitlines() if line.startswith(("$/step", "$/1M tokens"))]
    # one line each, with a figure for both jobs
    assert len(dollars) == 2 and all(line.count("$") == 3 for line in dollars), dollars
    assert max(len(line) for line in out.splitlines()) <= 80
    # The example measures part of each run: utilization is a measurement (not 100 %).
    for job in (trn, gpu):
        assert job["utilization"] is not None and Decimal(job["utilization"]) < 1
        assert 0 < Decimal(job["utilization_measured_share"]) < 1
        assert job["usd_per_accelerator_hour"] is not None


def test_jobs_show_says_what_its_figures_are(
    endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = run(capsys, "jobs", "show", "llama3-8b-lora", "--endpoint", endpoint)
    assert "finished" in out and "fully priced" in out and " complete" not in out
    assert "burning" not in out and "at risk" not in out  # not running: no burn rate
    assert "32.01 h wall clock" in out and "62.25 instance-hours" in out
    assert "$0.096" in out and "override 2026-11-01" in out and "snapshot 2025-12-01" in out
    assert "$0.8350 per 1M tokens" in out


def test_items_timeline_estimate_and_summaries_read_well(
    endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    first = run(capsys, "jobs", "items", "llama3-8b-lora", "--limit", "3", "--endpoint", endpoint)
    assert "more: --next-token" in first and "666.500000000" not in first and "$666.50" in first
    every = run(capsys, "jobs", "items", "llama3-8b-lora", "--all", "--endpoint", endpoint)
    key = "s3://llama-checkpoints/runs/llama3-8b-lora/step-6000/adapter.safetensors"
    assert key in every and "next-token" not in every
    out = run(capsys, "jobs", "timeline", "llama3-8b-lora", "--points", "4", "--endpoint", endpoint)
    assert "$1,313.27" in out and "#" in out
    out = run(
        capsys,
        "jobs",
        "estimate",
        "llama3-8b-lora-gpu-baseline",
        "--target-steps",
        "12000",
        "--endpoint",
        endpoint,
    )
    assert "6,000 to go" in out and "assumptions" in out
    out = run(capsys, "summaries", "show", "2026-11-02", "--endpoint", endpoint)
    assert out.startswith("Daily summary 2026-11-02") and "fully priced" in out
    assert "{" not in out


def test_api_errors_are_reported_not_raised(
    endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["jobs", "show", "nope", "--endpoint", endpoint]) == 1
    err = capsys.readouterr().err
    assert err == (
        "costtracker: no job 'nope' (HTTP 404; list the jobs with `costtracker jobs ls`)\n"
    )
    assert (
        main(
            [
                "budgets",
                "set",
                "b1",
                '{"amount_usd": "-5", "scope": {"account": true}}',
                "--endpoint",
                endpoint,
            ]
        )
        == 1
    )
    err = capsys.readouterr().err
    assert err.startswith("costtracker: amount_usd: ") and "(HTTP 400)" in err
    assert "{" not in err and "pydantic" not in err


def test_replay_json_stdout_is_one_json_document() -> None:
    """As the product owner runs it: a fresh process, stdout must parse as JSON (logs and
    metrics go elsewhere), for a scenario with whole days (the daily summary runs)."""
    import os
    import subprocess
    import sys

    scenario = Path(__file__).resolve().parents[1] / "scenarios" / "three_days.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POWERTOOLS", "AWS_"))}
    done = subprocess.run(
        [sys.executable, "-m", "costtracker.cli", "replay", str(scenario), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=True,
    )
    document = json.loads(done.stdout)
    assert [s["date"] for s in document["daily_summaries"]] == [
        "2026-11-01",
        "2026-11-02",
        "2026-11-03",
    ]
