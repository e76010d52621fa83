"""The CLI against the local API (the demo's): readable in 80 columns, --json stable."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from costtracker.cli import main
from costtracker.local_api import serve
from costtracker.replay import replay_session
from costtracker.scenario import load_scenario

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "llama-lora-vs-p5.json"


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with replay_session(load_scenario(EXAMPLE)) as replayer:
        replayer.run()
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
    out = run(capsys, "jobs", "ls", "--from", "2026-11-01", "--to", "2026-11-02",
              "--endpoint", endpoint)
    assert "llama3-8b-lora-gpu-baseline" in out
    out = run(capsys, "jobs", "compare", "llama3-8b-lora", "llama3-8b-lora-gpu-baseline",
              "--endpoint", endpoint)
    assert "Neuron" in out and "NVIDIA" in out and "note:" in out
    assert max(len(line) for line in out.splitlines()) <= 80
    out = run(capsys, "prices", "trn1.32xlarge", "--endpoint", endpoint)
    assert "$21.50/h list" in out and "snapshot" in out


def test_api_errors_are_reported_not_raised(endpoint: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["jobs", "show", "nope", "--endpoint", endpoint]) == 1
    assert "HTTP 404" in capsys.readouterr().err


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
        capture_output=True, text=True, env=env, timeout=300, check=True,
    )
    document = json.loads(done.stdout)
    assert [s["date"] for s in document["daily_summaries"]] == [
        "2026-11-01", "2026-11-02", "2026-11-03"]
