"""The dashboard's API routes (GET /change, GET /idle), its page on the local API and its
commands (``costtracker dashboard``, ``costtracker demo --budgets``) in issue 18's terms:
the one error shape, declared in the OpenAPI document; one-line CLI errors with an exit
code, said before any replay or listening."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from costtracker.demo import local_identity
from costtracker.local_api import serve
from costtracker.replay import replay_session
from costtracker.scenario import Scenario
from shared.config.ledger import LedgerConfig
from tests.integration.test_cli_errors import ODD_IDS, SMALL, fails


@pytest.fixture(scope="module")
def local_api() -> Iterator[dict[str, str]]:
    """The small scenario of test_cli_errors served as an admin and as a member of nlp."""
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


def _get(base: str, path: str) -> tuple[int, Any, dict[str, str]]:
    import urllib.error
    import urllib.request

    from costtracker.readiness import READY_WITHIN_S

    try:  # a generous bound (a loaded machine), not a fixed short one
        with urllib.request.urlopen(base + path, timeout=READY_WITHIN_S) as response:
            raw, status, headers = response.read(), response.status, dict(response.headers)
    except urllib.error.HTTPError as error:
        raw, status, headers = error.read(), error.code, dict(error.headers)
    kind = headers.get("Content-Type", "")
    return status, json.loads(raw) if kind.startswith("application/json") else raw, headers


WEEKS = "from0=2026-10-25&to0=2026-10-31&from1=2026-11-01&to1=2026-11-07"


@pytest.mark.parametrize(
    ("who", "query", "status", "field"),
    [
        ("admin", "from0=2026-11-02&to0=2026-11-01&from1=2026-11-01&to1=2026-11-07", 400, "from0"),
        ("admin", "from0=2026-11-01&to0=2026-11-01&from1=2026-11-07&to1=2026-11-01", 400, "from1"),
        ("admin", "from0=yesterday&to0=2026-11-01&from1=2026-11-01&to1=2026-11-07", 400, "from0"),
        ("admin", "to0=2026-11-01&from1=2026-11-01&to1=2026-11-07", 400, "from0"),
        ("admin", "from0=2026-01-01&to0=2026-03-31&from1=2030-11-01&to1=2030-11-07", 400, "from0"),
        ("admin", "from0=9999-12-30&to0=9999-12-31&from1=9999-12-30&to1=9999-12-31", 400, "to0"),
        ("admin", f"{WEEKS}&job_id=", 400, "job_id"),
        ("admin", f"{WEEKS}&job_id=nope", 404, "job_id"),
        ("nlp", f"{WEEKS}&team=vision", 403, "team"),
        ("nlp", f"{WEEKS}&job_id={quote(ODD_IDS[1], safe='')}", 403, None),
    ],
)
def test_change_answers_its_mistakes_in_the_one_error_shape(
    local_api: dict[str, str], who: str, query: str, status: int, field: str | None
) -> None:
    got, body, _ = _get(local_api[who], f"/change?{query}")
    assert got == status, body
    assert set(body) == {"statusCode", "field", "message", "errors"}
    assert body["statusCode"] == status and body["field"] == field
    assert "yesterday" not in body["message"]  # never the input
    from costtracker.openapi import schema

    assert str(status) in schema()["paths"]["/change"]["get"]["responses"]


def test_change_and_idle_answer_a_team_member_with_their_team_only(
    local_api: dict[str, str],
) -> None:
    got, body, _ = _get(local_api["nlp"], f"/change?{WEEKS}")
    assert got == 200 and body["scope"]["team"] == "nlp"
    got, body, _ = _get(local_api["nlp"], "/idle")
    assert got == 200 and body["instances"] == [] and body["estimated"] is True
    from costtracker.openapi import schema

    assert sorted(schema()["paths"]["/idle"]["get"]["responses"]) == ["200", "403"]


def test_the_local_api_serves_the_dashboard_page_beside_the_api(
    local_api: dict[str, str],
) -> None:
    got, page, headers = _get(local_api["nlp"], "/")
    assert got == 200 and b'src="/ui/app.js"' in page
    assert "default-src 'self'" in headers["Content-Security-Policy"]
    got, body, _ = _get(local_api["nlp"], "/ui/missing.js")
    assert got == 404
    got, body, _ = _get(local_api["nlp"], "/openapi.json")
    assert got == 200 and "/change" in body["paths"]


def test_dashboard_with_an_endpoint_without_a_scheme(capsys: Any) -> None:
    fails(capsys, ["dashboard", "--endpoint", "example.com/prod"], 2,
          "--endpoint", "with its scheme")  # fmt: skip


def test_dashboard_stays_on_the_loopback(capsys: Any) -> None:
    fails(capsys, ["dashboard", "--endpoint", "http://127.0.0.1:1", "--host", "0.0.0.0"], 2,
          "--host 0.0.0.0", "loopback", "credentials")  # fmt: skip


def test_dashboard_on_a_port_in_use(capsys: Any) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        fails(capsys, ["dashboard", "--endpoint", "http://127.0.0.1:1", "--port", port], 2,
              f"127.0.0.1:{port}", "--port")  # fmt: skip


def test_dashboard_with_a_port_that_is_not_a_number(capsys: Any) -> None:
    fails(capsys, ["dashboard", "--endpoint", "http://127.0.0.1:1", "--port", "http"], 2,
          "not a port number")  # fmt: skip


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, ("no such file",)),
        ("[{bad", ("not valid JSON", "line 1")),
        ('{"budget_id": "x"}', ("a JSON list of budgets",)),
        ('[{"budget_id": "x", "period": "month"}]', ("budget 0", "scope: Field required")),
        (
            '[{"budget_id": "x", "scope": {"tag": {"colour": "red"}}, "amount_usd": "5",'
            ' "period": "month"}]',
            ("budget x", "colour"),
        ),
    ],
)
def test_demo_budgets_mistakes_are_said_before_the_replay(
    capsys: Any, tmp_path: Path, content: str | None, words: tuple[str, ...]
) -> None:
    path = tmp_path / "budgets.json"
    if content is not None:
        path.write_text(content)
    fails(capsys, ["demo", "--no-serve", "--budgets", str(path)], 2, "--budgets", *words)
