"""The local API server answers only requests addressed to itself (costtracker.local_api):
a web page that reaches it through DNS rebinding sends its own domain as ``Host``."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator

import pytest

from costtracker.local_api import own_host, serve

NAMES = frozenset({"127.0.0.1", "localhost"})


@pytest.mark.parametrize(
    ("header", "allowed"),
    [
        ("127.0.0.1:8080", True),
        ("localhost:8080", True),
        ("[::1]:8080", True),  # an IP literal: no DNS name to rebind
        ("10.0.0.5:8080", True),
        ("attacker.example:8080", False),
        ("localhost.attacker.example:8080", False),
        ("127.0.0.1:9999", False),  # another port: another server
        ("127.0.0.1", False),  # no port means 80
        ("", False),
        ("127.0.0.1:notaport", False),
    ],
)
def test_a_host_is_ours_only_by_our_name_or_an_ip_and_our_port(header: str, allowed: bool) -> None:
    assert own_host(header, NAMES, 8080) is allowed


@pytest.fixture
def server() -> Iterator[int]:
    local = serve("127.0.0.1", 0)
    thread = threading.Thread(target=local.serve_forever, daemon=True)
    thread.start()
    yield int(local.server_address[1])
    local.shutdown()
    local.server_close()


def _request(port: int, method: str, path: str, host: str) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.putrequest(method, path, skip_host=True)
        connection.putheader("Host", host)
        connection.putheader("Content-Length", "0")
        connection.endheaders()
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


@pytest.mark.parametrize("method", ["GET", "PUT", "POST", "PATCH", "DELETE"])
def test_a_request_for_another_host_is_refused_before_the_api(server: int, method: str) -> None:
    status, body = _request(server, method, "/budgets/llama", f"attacker.example:{server}")
    assert status == 403
    assert json.loads(body)["field"] == "Host"


def test_the_page_is_served_to_its_own_address(server: int) -> None:
    assert _request(server, "GET", "/", f"127.0.0.1:{server}")[0] == 200
    assert _request(server, "GET", "/", f"localhost:{server}")[0] == 200
    assert _request(server, "GET", "/", f"rebound.example:{server}")[0] == 403


def test_the_demo_context_says_what_the_data_is_only_when_given() -> None:
    """``/ui/context.json``: the demo's as-of and scenario for the page's banner; a server
    not given one (any other use of the local API) answers 404, and so the page says
    nothing."""
    local = serve("127.0.0.1", 0)
    thread = threading.Thread(target=local.serve_forever, daemon=True)
    thread.start()
    port = int(local.server_address[1])
    try:
        assert _request(port, "GET", "/ui/context.json", f"127.0.0.1:{port}")[0] == 404
        context = {"mode": "demo", "as_of": "2026-11-16T12:00:00Z", "scenario": "x.json"}
        local.demo_context = context  # type: ignore[attr-defined]
        status, body = _request(port, "GET", "/ui/context.json", f"127.0.0.1:{port}")
        assert (status, json.loads(body)) == (200, context)
        assert _request(port, "GET", "/ui/context.json", f"rebound.example:{port}")[0] == 403
    finally:
        local.shutdown()
        local.server_close()
