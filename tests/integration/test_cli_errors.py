"""Every ordinary mistake is one line on stderr naming the problem and what to do, with a
non-zero exit, never a traceback (issue 18's list, one test each); ids reach the API
exactly as typed; the local API acts as the caller given by ``--as``."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from costtracker.cli import main
from costtracker.demo import local_identity
from costtracker.local_api import LOCAL_CALLER_ARN, RemoteRefused, serve
from costtracker.replay import replay_session
from costtracker.scenario import Scenario
from shared.config.ledger import LedgerConfig
from tests.aws_events import ec2_state_event

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "costtracker" / "examples" / "llama-lora-vs-p5.json"
ODD_IDS = ("x?team=y", "lora ünï/β #1")


def _state(n: int, at: str, iid: str, st: str) -> dict[str, Any]:
    return ec2_state_event(f"e{n}", iid, st, at)


SMALL = {
    "instances": [
        {
            "instance_id": "i-0000000000000aa01",
            "instance_type": "trn1.2xlarge",
            "tags": {"training-job": ODD_IDS[0], "team": "nlp"},
        },
        {
            "instance_id": "i-0000000000000aa02",
            "instance_type": "trn1.2xlarge",
            "tags": {"training-job": ODD_IDS[1], "team": "vision"},
        },
    ],
    "events": [
        _state(1, "2026-11-01T10:00:00Z", "i-0000000000000aa01", "running"),
        _state(2, "2026-11-01T10:00:00Z", "i-0000000000000aa02", "running"),
        _state(3, "2026-11-01T11:00:00Z", "i-0000000000000aa01", "stopped"),
    ],
    "until": "2026-11-01T12:00:00Z",
}


@pytest.fixture(scope="module")
def local_api() -> Iterator[dict[str, str]]:
    """The small scenario served twice: as an admin, and as a member of team nlp."""
    from shared.config.access import AccessConfig

    nlp, nlp_access = local_identity("team:nlp")
    admin, admin_access = local_identity("admin")
    assert nlp_access is not None and admin_access is not None
    access = AccessConfig(rules=nlp_access.rules + admin_access.rules)
    with replay_session(Scenario.model_validate(SMALL), LedgerConfig(access=access)) as replayer:
        replayer.run()
        servers = {"admin": serve("127.0.0.1", 0, admin), "nlp": serve("127.0.0.1", 0, nlp)}
        for server in servers.values():
            threading.Thread(target=server.serve_forever, daemon=True).start()
        yield {k: f"http://127.0.0.1:{s.server_address[1]}" for k, s in servers.items()}
        for server in servers.values():
            server.shutdown()
            server.server_close()


def fails(capsys: pytest.CaptureFixture[str], argv: list[str], code: int, *words: str) -> str:
    """Runs the CLI: the exit code, nothing on stdout, one line on stderr with ``words``."""
    try:
        got = main(argv)
    except SystemExit as exc:  # argparse's usage errors
        got = int(exc.code or 0)
    out, err = capsys.readouterr()
    assert got == code, (got, err)
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for word in words:
        assert word in err, err
    return err


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- the list, one test each ----------------------------------------------------


def test_a_job_id_with_a_space(local_api: dict[str, str], capsys: Any) -> None:
    fails(capsys, ["jobs", "show", "a b", "--endpoint", local_api["admin"]], 1,
          "no job 'a b'", "HTTP 404", "costtracker jobs ls")  # fmt: skip


def test_a_non_ascii_job_id(local_api: dict[str, str], capsys: Any) -> None:
    fails(capsys, ["jobs", "show", "ünï", "--endpoint", local_api["admin"]], 1,
          "no job 'ünï'", "HTTP 404")  # fmt: skip


def test_an_empty_job_id(capsys: Any) -> None:
    fails(capsys, ["jobs", "show", ""], 2, "job id is not empty")


def test_the_demo_not_running(capsys: Any) -> None:
    endpoint = f"http://127.0.0.1:{free_port()}"
    fails(capsys, ["jobs", "ls", "--endpoint", endpoint], 1,
          "cannot reach the API", "costtracker demo")  # fmt: skip


def test_an_endpoint_without_a_scheme(capsys: Any) -> None:
    fails(capsys, ["jobs", "ls", "--endpoint", "127.0.0.1:18080"], 2,
          "--endpoint", "http://127.0.0.1:8080")  # fmt: skip


def test_a_budget_that_is_not_json(capsys: Any) -> None:
    fails(capsys, ["budgets", "set", "x", "{bad"], 2, "not valid JSON", "amount_usd")


def test_a_missing_demo_scenario(capsys: Any) -> None:
    fails(capsys, ["demo", "--scenario", "/missing.json"], 2, "/missing.json", "no such file")


def test_a_port_in_use_is_said_before_the_replay_runs(capsys: Any) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        err = fails(capsys, ["demo", "--port", port], 2, f"127.0.0.1:{port}", "--port")
    assert "in use" in err


def test_a_closed_pipe_ends_quietly(local_api: dict[str, str]) -> None:
    """`costtracker jobs compare A B --json | head -0`: the reader is gone before the
    output is written; exit 141 (as `yes | head` reports), nothing on stderr."""
    command = [sys.executable, "-m", "costtracker.cli", "jobs", "compare", *ODD_IDS, "--json",
               "--endpoint", local_api["admin"]]  # fmt: skip
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()  # before the child's first write: it meets a broken pipe
    stderr = child.stderr.read().decode()
    assert child.wait(timeout=120) == 141
    assert stderr == ""


def test_backfill_without_the_stacks_settings(capsys: Any, monkeypatch: Any) -> None:
    for name in ("TABLE_NAME", "REPORT_BUCKET", "LEDGER_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    fails(capsys, ["summaries", "backfill", "--from", "2026-11-01", "--to", "2026-11-02"], 2,
          "TABLE_NAME", "REPORT_BUCKET", "export")  # fmt: skip


def test_redrive_without_a_region(capsys: Any, monkeypatch: Any, tmp_path: Path) -> None:
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    fails(capsys, ["dlq", "redrive", "--queue-url", "http://localhost:1/q", "--function-name",
                   "f"], 2, "no AWS region", "--region")  # fmt: skip


def test_a_chaos_delay_that_is_not_a_number(capsys: Any) -> None:
    fails(capsys, ["replay", str(EXAMPLE), "--chaos", "1", "--chaos-delay", "nan"], 2,
          "--chaos-delay", "seconds")  # fmt: skip


def _scenario(tmp_path: Path, **changes: Any) -> str:
    data = json.loads(EXAMPLE.read_text())
    data.update(changes)
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_a_replay_in_an_unknown_region_is_refused_up_front(capsys: Any, tmp_path: Path) -> None:
    fails(capsys, ["replay", _scenario(tmp_path, region="mars-1")], 2,
          "region", "not an AWS region", "us-east-1")  # fmt: skip


def test_a_replay_of_a_binary_file(capsys: Any, tmp_path: Path) -> None:
    binary = tmp_path / "b.json"
    binary.write_bytes(bytes(range(256)))
    fails(capsys, ["replay", str(binary)], 2, "not a text file")


@pytest.mark.parametrize("price", ["1e30", "NaN", "-1", "Infinity", "0"])
def test_a_replay_with_an_absurd_price_is_refused_at_load(
    capsys: Any, tmp_path: Path, price: str
) -> None:
    path = _scenario(tmp_path, prices={"ec2": {"m5.large": price}})
    fails(capsys, ["replay", path], 2, "prices", "m5.large", "positive", "at most")


# --- ids, the debug switch, the local API's identity and listening --------------------


def test_odd_job_ids_name_exactly_that_job(local_api: dict[str, str], capsys: Any) -> None:
    listed = json.loads(_ok(capsys, ["jobs", "ls", "--from", "2026-11-01", "--json",
                                     "--endpoint", local_api["admin"]]))  # fmt: skip
    assert {j["job_id"] for j in listed["jobs"]} == set(ODD_IDS)
    for job_id in ODD_IDS:
        shown = json.loads(_ok(capsys, ["jobs", "show", job_id, "--json",
                                        "--endpoint", local_api["admin"]]))  # fmt: skip
        assert shown["job_id"] == job_id
        items = json.loads(_ok(capsys, ["jobs", "items", job_id, "--json",
                                        "--endpoint", local_api["admin"]]))  # fmt: skip
        assert items["job_id"] == job_id and items["items"]


def _ok(capsys: Any, argv: list[str]) -> str:
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert err == ""
    return out


def test_debug_shows_the_traceback(capsys: Any) -> None:
    from costtracker.errors import CliError

    with pytest.raises(CliError):
        main(["--debug", "jobs", "ls", "--endpoint", "127.0.0.1:1"])
    with pytest.raises(CliError):
        main(["jobs", "ls", "--endpoint", "127.0.0.1:1", "--debug"])


def test_local_identity_team_member_sees_only_their_team(
    local_api: dict[str, str], capsys: Any
) -> None:
    listed = json.loads(_ok(capsys, ["jobs", "ls", "--from", "2026-11-01", "--json",
                                     "--endpoint", local_api["nlp"]]))  # fmt: skip
    assert [j["job_id"] for j in listed["jobs"]] == [ODD_IDS[0]]
    fails(capsys, ["jobs", "show", ODD_IDS[1], "--endpoint", local_api["nlp"]], 1,
          "not visible to team nlp", "HTTP 403")  # fmt: skip
    fails(capsys, ["summaries", "show", "2026-11-01", "--endpoint", local_api["nlp"]], 1,
          "finance and admins", "HTTP 403")  # fmt: skip


def test_local_identity_from_an_arn_and_refused_specs() -> None:
    identity, access = local_identity("arn:aws:iam::123456789012:user/ana")
    assert identity.user_arn == "arn:aws:iam::123456789012:user/ana" and access is None
    _, access = local_identity("finance")
    assert access is not None and access.rules[0].role == "finance"
    from costtracker.errors import CliError

    with pytest.raises(CliError, match="team:NAME"):
        local_identity("team:")


def test_one_local_identity_the_local_admin_by_default_and_as_chooses_another(
    local_api: dict[str, str], capsys: Any
) -> None:
    """No --as and --as admin are the same explicit caller, made an admin by the emulator's
    configuration; any other caller is resolved by the rules, and the API fails closed."""
    default, none = local_identity(None)
    admin, admin_access = local_identity("admin")
    assert default.user_arn == admin.user_arn == LOCAL_CALLER_ARN and none is None
    assert admin_access is not None and admin_access.rules[0].arn_pattern == LOCAL_CALLER_ARN
    stranger, _ = local_identity("arn:aws:iam::123456789012:user/ana")
    # Two more servers on the fixture's replay (one emulator per module).
    servers = {"default": serve("127.0.0.1", 0), "stranger": serve("127.0.0.1", 0, stranger)}
    for server in servers.values():
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = {k: f"http://127.0.0.1:{s.server_address[1]}" for k, s in servers.items()}
        listed = json.loads(_ok(capsys, ["jobs", "ls", "--from", "2026-11-01", "--json",
                                         "--endpoint", base["default"]]))  # fmt: skip
        assert sorted(j["job_id"] for j in listed["jobs"]) == sorted(ODD_IDS)
        fails(capsys, ["jobs", "ls", "--endpoint", base["stranger"]], 1,
              "access denied for arn:aws:iam::123456789012:user/ana", "ledger.access.rules",
              "HTTP 403")  # fmt: skip
    finally:
        for server in servers.values():
            server.shutdown()
            server.server_close()


def test_budgets_history_shows_each_change_with_the_callers_arn(
    local_api: dict[str, str], capsys: Any
) -> None:
    endpoint = ["--endpoint", local_api["admin"]]
    definition = '{"scope": {"tag": {"team": "nlp"}}, "amount_usd": "500"}'
    _ok(capsys, ["budgets", "set", "cli-history", definition, *endpoint])
    _ok(capsys, ["budgets", "rm", "cli-history", *endpoint])
    body = json.loads(_ok(capsys, ["budgets", "history", "cli-history", "--json", *endpoint]))
    assert [(c["who"], c["action"]) for c in body["changes"]] == [
        (LOCAL_CALLER_ARN, "create"), (LOCAL_CALLER_ARN, "delete")]  # fmt: skip
    table = _ok(capsys, ["budgets", "history", "cli-history", *endpoint]).splitlines()
    assert table[0].split() == ["AT", "WHO", "ACTION", "BEFORE", "AFTER"]
    assert all(len(line) <= 80 for line in table)
    assert sum("create" in line for line in table) == sum("delete" in line for line in table) == 1
    fails(capsys, ["budgets", "history", "cli-history", "--endpoint", local_api["nlp"]], 1,
          "finance and admins", "HTTP 403")  # fmt: skip


def test_a_local_post_is_answered_by_the_handler(local_api: dict[str, str]) -> None:
    import urllib.request

    from costtracker.readiness import answer

    request = urllib.request.Request(local_api["admin"] + "/jobs", data=b"{}", method="POST",
                                     headers={"Content-Type": "application/json"})  # fmt: skip
    status, raw = answer(request, "the local API")
    assert status == 404
    body = json.loads(raw)
    assert body["statusCode"] == 404 and "POST" in body["message"]


def test_the_local_server_stays_on_the_loopback_unless_told() -> None:
    with pytest.raises(RemoteRefused, match="--allow-remote"):
        serve("0.0.0.0", 0)
    server = serve("0.0.0.0", 0, allow_remote=True)
    server.server_close()
    serve("localhost", 0).server_close()


def test_demo_allow_remote_warns_and_serves_every_summary_of_the_replay(
    capsys: Any, monkeypatch: Any
) -> None:
    """The bundled demo (the two-team fortnight): its replay reports every whole day
    before its end, and the API has each, the last too (stored by the demo when its
    scheduled run falls after ``until``); it says as of when its data is."""
    from http.server import ThreadingHTTPServer

    from costtracker.lambda_context import FakeLambdaContext
    from costtracker.local_api import proxy_event

    answers: dict[str, int] = {}

    def one_look(self: Any, *args: Any) -> None:
        from functions.job_cost_api.handler import handler

        for day in ("2026-11-02", "2026-11-15"):
            response = handler(proxy_event("GET", f"/summaries/{day}", {}),
                               FakeLambdaContext("job_cost_api"))  # fmt: skip
            answers[day] = response["statusCode"]  # then return, as after Ctrl-C

    monkeypatch.setattr(ThreadingHTTPServer, "serve_forever", one_look)
    code = main(["demo", "--host", "0.0.0.0", "--port", "0", "--allow-remote"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "WARNING: --allow-remote" in err and "every caller" in err
    assert answers == {"2026-11-02": 200, "2026-11-15": 200}
    assert "Demo data as of 2026-11-16T12:00:00Z (the end of two-teams-fortnight.json)" in out
    # Said before the replay: who the local API says is calling (the explicit local admin).
    first_line = out.splitlines()[0]
    assert first_line.startswith(f"The local API will answer as the local admin {LOCAL_CALLER_ARN}")
    assert f"acts as the local admin {LOCAL_CALLER_ARN}" in err
    assert "llama-sft-gpu" in out and "llama-pretrain  " in out


def test_no_command_prints_a_traceback_for_an_unexpected_error(
    capsys: Any, monkeypatch: Any
) -> None:
    from costtracker.commands import prices

    def boom(args: Any) -> int:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(prices, "cmd_prices", boom)
    fails(capsys, ["prices", "m5.large"], 1, "unexpected error", "--debug")


def test_the_cli_module_runs_without_the_environment_of_a_developer() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    command = [sys.executable, "-m", "costtracker.cli", "jobs", "show", ""]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60, cwd=ROOT)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
