"""The dashboard's files and its signing proxy, without a browser (loopback HTTP only)."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from costtracker.dashboard import asset
from costtracker.dashboard.server import make_proxy
from costtracker.readiness import answer


def test_the_page_and_its_assets_are_served_with_a_strict_policy() -> None:
    page = asset("/")
    assert page is not None
    body, headers = page
    assert b'src="/ui/app.js"' in body
    assert "default-src 'self'" in headers["Content-Security-Policy"]
    for name in ("/ui/app.js", "/ui/app.css"):
        found = asset(name)
        assert found is not None and found[0]
    text = b"".join(asset(n)[0] for n in ("/", "/ui/app.js", "/ui/app.css"))  # type: ignore[index]
    assert b"http://" not in text.replace(b"http://www.w3.org/2000/svg", b"")
    assert b"https://" not in text


@pytest.mark.parametrize("path", ["/ui/../cli.py", "/ui/", "/ui/.hidden.js", "/ui/x.py", "/jobs"])
def test_other_paths_are_not_assets(path: str) -> None:
    assert asset(path) is None


class Upstream(BaseHTTPRequestHandler):
    seen: list[dict[str, Any]] = []

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        Upstream.seen.append({"path": self.path, "headers": dict(self.headers.items())})
        status = 403 if self.path.startswith("/prod/summaries") else 200
        body = json.dumps({"ok": status == 200, "message": "for finance"}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _serve(server: ThreadingHTTPServer) -> threading.Thread:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return thread


@pytest.fixture
def proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    _serve(upstream)
    endpoint = f"http://127.0.0.1:{upstream.server_address[1]}/prod"
    server = make_proxy(endpoint, "127.0.0.1", 0, sign=True)
    _serve(server)
    Upstream.seen.clear()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    upstream.shutdown()
    server.server_close()
    upstream.server_close()


def _get(url: str, **kwargs: Any) -> tuple[int, bytes]:
    return answer(urllib.request.Request(url, **kwargs), f"the dashboard proxy at {url}")


def test_api_calls_are_forwarded_signed_and_the_page_holds_no_secret(proxy: str) -> None:
    status, body = _get(f"{proxy}/jobs?status=running")
    assert status == 200 and json.loads(body)["ok"] is True
    seen = Upstream.seen[-1]
    assert seen["path"] == "/prod/jobs?status=running"
    auth = seen["headers"]["Authorization"]
    assert auth.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/eu-west-1/execute-api/aws4_request" in auth
    status, page = _get(f"{proxy}/")
    assert status == 200 and b"AKIDEXAMPLE" not in page and b"costtracker" in page
    assert len(Upstream.seen) == 1  # the page itself is not forwarded


def test_the_api_answer_is_passed_through_as_it_is(proxy: str) -> None:
    status, body = _get(f"{proxy}/summaries?from=2026-11-01&to=2026-11-02")
    assert status == 403 and json.loads(body)["message"] == "for finance"


def test_only_get_and_only_its_own_host(proxy: str) -> None:
    status, body = _get(f"{proxy}/budgets/x", method="DELETE")
    assert status == 405 and b"only GET" in body
    status, body = _get(f"{proxy}/jobs", headers={"Host": "attacker.example:80"})
    assert status == 403 and b"loopback" in body
    assert Upstream.seen == []
