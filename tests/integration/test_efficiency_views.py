"""Efficiency people can see, through the local API and the CLI, on the bundled
two-teams-fortnight example (team nlp: llama-sft on a trn1.32xlarge, 16 chips, $21.50/h;
llama-sft-gpu a p5.48xlarge in week 2; tokens-per-step 262,144). Figures checked by hand:

- llama-sft ran 140 instance-hours: 140 x 16 = 2,240 accelerator-hours, $21.50 / 16 =
  $1.34375 per accelerator-hour; no utilization datapoint, so "not measured";
  tokens/s = steps/h x 262,144 / 3,600.
- Why did it change (nlp, week of Nov 2 against week of Nov 9): llama-sft 896 -> 1,344
  accelerator-hours at $1.34375 (no price part), 56,000 -> 72,000 steps:
  use 602 ln(9/7)/ln(3/2) = $373.13, efficiency 602 ln(7/6)/ln(3/2) = $228.87;
  llama-sft-gpu spent in week 2 only: all use.
"""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from costtracker.cli import main
from costtracker.local_api import serve
from costtracker.replay import replay_session
from costtracker.scenario import load_scenario

EXAMPLE = Path(__file__).resolve().parents[2] / "costtracker/examples/two-teams-fortnight.json"
WEEKS = "from0=2026-11-02&to0=2026-11-08&from1=2026-11-09&to1=2026-11-15"


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with replay_session(load_scenario(EXAMPLE)) as replayer:
        replayer.run()
        server = serve("127.0.0.1", 0)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        yield f"http://127.0.0.1:{server.server_address[1]}"
        server.shutdown()
        server.server_close()


def get(endpoint: str, path: str) -> Any:
    with urllib.request.urlopen(endpoint + path) as response:
        return json.load(response)


def test_the_job_view_has_its_efficiency_and_storage_over_time(endpoint: str) -> None:
    body = get(endpoint, "/jobs/llama-sft/efficiency?points=5")
    assert Decimal(body["accelerator_hours"]) == 2240
    assert Decimal(body["usd_per_accelerator_hour"]) == Decimal("1.34375")
    assert body["utilization"] is None and body["effective_accelerator_hours"] is None
    assert body["tokens_per_step"] == 262144
    tokens = Decimal(body["steps_per_hour"]) * 262144 / 3600
    assert abs(Decimal(body["tokens_per_second"]) - tokens) < Decimal("1e-6")
    assert len(body["storage_gb"]) == 5
    assert body["storage_gb"][-1]["at"] == body["as_of"]
    assert Decimal(body["storage_gb"][-1]["gb"]) > 0


def test_the_team_view_adds_hours_never_steps(endpoint: str) -> None:
    body = get(endpoint, "/efficiency?team=nlp&from=2026-11-01&to=2026-11-16")
    jobs = {j["job_id"]: j for j in body["jobs"]}
    assert set(jobs) == {"llama-sft", "llama-sft-gpu", "llama-pretrain"}
    hours = sum(Decimal(j["accelerator_hours"]) for j in jobs.values())
    assert Decimal(body["totals"]["accelerator_hours"]) == hours.quantize(Decimal("1e-9"))
    assert "steps" not in body["totals"] and "utilization" not in body["totals"]


def test_the_comparison_carries_accelerator_hours_and_tokens_per_second(endpoint: str) -> None:
    rows = get(endpoint, "/compare?jobs=llama-sft,llama-sft-gpu")["jobs"]
    assert Decimal(rows[0]["accelerator_hours"]) == 2240
    assert rows[0]["tokens_per_second"] is not None


def test_why_did_it_change_splits_per_job_to_the_cent(endpoint: str) -> None:
    body = get(endpoint, f"/change?{WEEKS}&team=nlp")
    change = body["change"]
    parts = sum(Decimal(change[f"{k}_usd"]) for k in ("use", "efficiency", "price", "other"))
    shown = Decimal(f"{Decimal(body['after']['total_usd']):.2f}") - Decimal(
        f"{Decimal(body['before']['total_usd']):.2f}"
    )
    assert parts == Decimal(change["total_usd"]) == shown
    by_job = {j["job_id"]: j for j in body["by_job"]}
    sft = by_job["llama-sft"]
    assert sft["efficiency_basis"] == "steps"
    exact = sft["change"]["exact"]
    assert abs(Decimal(exact["use_usd"]) - Decimal("373.1302220578")) < Decimal("1e-9")
    assert abs(Decimal(exact["efficiency_usd"]) - Decimal("228.8697779422")) < Decimal("1e-9")
    assert Decimal(exact["price_usd"]) == 0
    job_parts = [
        Decimal(sft["change"][f"{k}_usd"]) for k in ("use", "efficiency", "price", "other")
    ]
    assert sum(job_parts) == Decimal(sft["change"]["total_usd"])
    assert by_job["llama-sft-gpu"]["efficiency_basis"] == "one_period"


def test_the_cli_shows_the_job_team_and_change(
    endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["efficiency", "job", "llama-sft", "--endpoint", endpoint]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Efficiency of llama-sft (stopped, trn1.32xlarge)")
    assert [line.split()[-2:] for line in out.splitlines() if line.startswith("utilization")] == [
        ["not", "measured"]
    ]
    assert "$/accelerator-hour" in out and "$1.344" in out
    assert "CHECKPOINTS (GB)" in out
    argv = ["efficiency", "team", "--team", "nlp", "--from", "2026-11-01", "--to", "2026-11-16"]
    assert main([*argv, "--endpoint", endpoint]) == 0
    out = capsys.readouterr().out
    assert "llama-sft-gpu" in out and "3 job(s): " in out
    weeks = ["--from0", "2026-11-02", "--to0", "2026-11-08", "--from1", "2026-11-09"]
    assert main(["change", *weeks, "--to1", "2026-11-15", "--team", "nlp",
                 "--endpoint", endpoint]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "use +$923.54, efficiency +$228.87, price +$0.00, other +$1.43" in out
    assert "llama-sft      steps" in out


def test_change_with_a_period_backwards_says_what_to_do(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["change", "--from0", "2026-11-08", "--to0", "2026-11-02", "--from1", "2026-11-09",
            "--to1", "2026-11-15", "--endpoint", "http://127.0.0.1:9"]  # fmt: skip
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        "costtracker: --from0 2026-11-08 is after --to0 2026-11-02: give the first day first\n"
    )
