"""Waiting on a local service: a generous bound, then one line naming what was waited
for (issue 27, "Tests"; issue 29: the emulator's reset had a fixed 10 s timeout)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from costtracker.readiness import READY_WITHIN_S, NotReady, answer, wait_until


def _refusing_port() -> int:
    with socket.socket() as s:  # bound, then closed: nothing listens there
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_service_that_never_answers_fails_with_what_was_waited_for() -> None:
    port = _refusing_port()
    started = time.monotonic()
    with pytest.raises(NotReady) as caught:
        answer(f"http://127.0.0.1:{port}/ready", "the test's service", within_s=0.6)
    assert time.monotonic() - started >= 0.6
    message = str(caught.value)
    assert message.startswith("waited 1 s for the test's service; last error: ")
    assert "\n" not in message


def test_the_default_bound_is_generous() -> None:
    assert READY_WITHIN_S >= 60


class _Late(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(404)
        self.end_headers()
        self.wfile.write(b"no such page")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def late_server() -> Iterator[int]:
    """A server that starts listening half a second after the client starts asking."""
    port = _refusing_port()
    servers: list[HTTPServer] = []

    def start() -> None:
        time.sleep(0.5)
        server = HTTPServer(("127.0.0.1", port), _Late)
        servers.append(server)
        server.serve_forever()

    threading.Thread(target=start, daemon=True).start()
    yield port
    for server in servers:
        server.shutdown()
        server.server_close()


def test_a_late_service_is_waited_for_and_an_http_error_is_an_answer(late_server: int) -> None:
    status, body = answer(f"http://127.0.0.1:{late_server}/x", "the late server", within_s=30)
    assert (status, body) == (404, b"no such page")


def test_only_the_named_errors_are_retried() -> None:
    calls: list[int] = []

    def attempt() -> int:
        calls.append(1)
        if len(calls) < 3:
            raise ConnectionRefusedError("not yet")
        return 7

    assert wait_until(attempt, "three tries", within_s=10) == 7
    with pytest.raises(ValueError):
        wait_until(lambda: int("x"), "a bug", within_s=10)
