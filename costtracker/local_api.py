"""A small HTTP adapter that serves the deployed API's handler on the loopback.

It turns each request into an API Gateway REST proxy event (the path still
percent-encoded, as API Gateway REST passes it; the handler decodes ids) and calls the
same ``functions.job_cost_api.handler``. It signs nothing and checks no credentials:
it trusts the loopback caller, and says so when it starts. It acts as one caller, put
where API Gateway puts the SigV4-verified caller: by default the explicit local admin
``LOCAL_CALLER_ARN`` (the handler fails closed, so the emulator's configuration gets an
admin rule for it, ``with_local_admin``), or the identity given (``costtracker demo
--as team:nlp``), so that access control can be tried locally. It refuses to listen
beyond the loopback unless told to (``allow_remote``): every network caller would have
that identity. A request whose ``Host`` is not the server's own address is refused (403),
so a web page cannot reach it through DNS rebinding (``own_host``). A GET of ``/`` or
``/ui/...`` is the dashboard's page
(``costtracker.dashboard``); requests reach the handler one at a time, as in one Lambda
container.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import threading
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from costtracker.lambda_context import FakeLambdaContext

# No AWS account has id 000000000000: this identity exists in local mode only.
LOCAL_CALLER_ARN = "arn:aws:iam::000000000000:user/costtracker-local"

# What a request target may hold unescaped; anything else (a raw space, raw UTF-8 read
# as latin-1 by http.server) is percent-encoded as a client should have done.
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"
MAX_BODY = 1_000_000
# The demo's context for the page ({"mode": "demo", "as_of", "scenario"}): beside the
# page's files, never the deployed API's.
CONTEXT_PATH = "/ui/context.json"
# One request at a time through the handler, as one Lambda container runs them: the
# resolver keeps the current event on the (module-global) app, and the dashboard's page
# sends several requests at once.
_HANDLER_LOCK = threading.Lock()


class RemoteRefused(ValueError):
    """The host is not a loopback address and remote listening was not allowed."""


def with_local_admin(ledger_config_json: str) -> str:
    """The configuration with a first rule making the local identity an admin."""
    config = json.loads(ledger_config_json or "{}")
    access = config.setdefault("access", {})
    rules = [r for r in access.get("rules", []) if r.get("arn_pattern") != LOCAL_CALLER_ARN]
    access["rules"] = [{"arn_pattern": LOCAL_CALLER_ARN, "role": "admin"}, *rules]
    return json.dumps(config)


@dataclass(frozen=True)
class LocalIdentity:
    """Who the local API says is calling: the ARN put where API Gateway puts the
    SigV4-verified caller (requestContext.identity.userArn), and how the demo names it."""

    user_arn: str = LOCAL_CALLER_ARN
    label: str = f"the local admin {LOCAL_CALLER_ARN}"


def _wire_bytes(text: str) -> bytes:
    """The bytes of a request target: http.server reads them as latin-1."""
    try:
        return text.encode("latin-1")
    except UnicodeEncodeError:
        return text.encode("utf-8")


def proxy_event(
    method: str,
    raw_path: str,
    headers: dict[str, str],
    body: str | None = None,
    user_arn: str = LOCAL_CALLER_ARN,
) -> dict[str, Any]:
    parts = urlsplit(raw_path)
    path = quote(_wire_bytes(parts.path), safe=_PATH_SAFE)
    multi = parse_qs(quote(_wire_bytes(parts.query), safe=_PATH_SAFE + "?"), keep_blank_values=True)
    return {
        "resource": "/{proxy+}",
        "path": path,
        "httpMethod": method,
        "headers": headers,
        "multiValueHeaders": {k: [v] for k, v in headers.items()},
        "queryStringParameters": {k: v[-1] for k, v in multi.items()} or None,
        "multiValueQueryStringParameters": multi or None,
        "pathParameters": {"proxy": path.lstrip("/")},
        "stageVariables": None,
        "body": body,
        "isBase64Encoded": False,
        "requestContext": {
            "requestId": str(uuid.uuid4()),
            "stage": "local",
            "httpMethod": method,
            "path": path,
            "resourcePath": "/{proxy+}",
            "identity": {"sourceIp": "127.0.0.1", "caller": "loopback", "userArn": user_arn},
        },
    }


class ApiRequestHandler(BaseHTTPRequestHandler):
    server_version = "costtracker-local"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: str, headers: dict[str, str] | None = None) -> None:
        payload = body.encode()
        self.send_response(status)
        for key, value in (headers or {"Content-Type": "application/json"}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _refuses_host(self) -> bool:
        """Refuse (403) a request whose Host is not this server's own address."""
        names: frozenset[str] = getattr(self.server, "own_names", frozenset())
        port = int(getattr(self.server, "server_port", 0))  # HTTPServer sets it when bound
        if own_host(self.headers.get("Host") or "", names, port):
            return False
        from shared.api.errors import ApiProblem

        problem = ApiProblem(403, "Host: this server answers only its own address", "Host")
        self._send(403, json.dumps(problem.body()))
        return True

    def do_GET(self) -> None:
        from costtracker.dashboard import send_asset

        if self._refuses_host():
            return
        if urlsplit(self.path).path == CONTEXT_PATH:
            self._send_context()
            return
        if send_asset(self, urlsplit(self.path).path):  # the dashboard: / and /ui/...
            return
        if urlsplit(self.path).path == "/openapi.json":
            from costtracker.openapi import document

            with _HANDLER_LOCK:  # it reads the module-global resolver too
                text = document()
            self._send(200, text)
            return
        self._forward("GET")

    def _send_context(self) -> None:
        """What the page says about its data: the demo's as-of and scenario (a 404 when the
        server was not given one, as a deployed API's proxy has none)."""
        context = getattr(self.server, "demo_context", None)
        if context is None:
            from shared.api.errors import ApiProblem

            self._send(404, json.dumps(ApiProblem(404, "no demo context").body()))
            return
        self._send(200, json.dumps(context))

    def do_PUT(self) -> None:
        if not self._refuses_host():
            self._forward("PUT")

    def do_POST(self) -> None:
        if not self._refuses_host():
            self._forward("POST")

    def do_PATCH(self) -> None:
        if not self._refuses_host():
            self._forward("PATCH")

    def do_DELETE(self) -> None:
        if not self._refuses_host():
            self._forward("DELETE")

    def _forward(self, method: str) -> None:
        from functions.job_cost_api.handler import handler
        from shared.api.errors import bad_input

        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            problem = bad_input(
                "Content-Length", f"give the body's length, at most {MAX_BODY} bytes"
            )
            self._send(400, json.dumps(problem.body()))
            return
        # API Gateway hands a non-binary body to Lambda as text.
        body = self.rfile.read(length).decode(errors="replace") if length else None
        identity: LocalIdentity = getattr(self.server, "identity", LocalIdentity())
        event = proxy_event(
            method, self.path, dict(self.headers.items()), body, user_arn=identity.user_arn
        )
        try:
            with _HANDLER_LOCK:
                response = handler(event, FakeLambdaContext("job_cost_api"))  # type: ignore[arg-type]
        except Exception as exc:  # as API Gateway: a function error is a 502
            self._send(
                502, json.dumps({"message": f"Internal server error ({type(exc).__name__})"})
            )
            return
        headers = {k: str(v) for k, v in (response.get("headers") or {}).items()}
        headers.setdefault("Content-Type", "application/json")
        self._send(int(response["statusCode"]), response.get("body") or "", headers)


def own_host(header: str, names: frozenset[str], port: int) -> bool:
    """Whether a request's ``Host`` names this server: one of ``names`` (the name it was
    started with, ``localhost``) or an IP address literal, and its port. A page that
    reaches the server through DNS rebinding sends its own domain name, never an IP."""
    try:
        parts = urlsplit(f"//{header}")
        name, given = (parts.hostname or ""), parts.port
    except ValueError:
        return False
    if (given if given is not None else 80) != port or not name:
        return False
    if name in names:
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback address."""
    try:
        infos = socket.getaddrinfo(host, None)
    except (OSError, UnicodeError):
        return False
    return bool(infos) and all(
        ipaddress.ip_address(str(info[4][0]).split("%")[0]).is_loopback for info in infos
    )


def serve(
    host: str,
    port: int,
    identity: LocalIdentity | None = None,
    allow_remote: bool = False,
) -> ThreadingHTTPServer:
    """A bound server (not yet serving). Raises ``RemoteRefused`` for a non-loopback host
    without ``allow_remote``, and ``OSError`` when the port is taken."""
    if not allow_remote and not is_loopback(host):
        raise RemoteRefused(
            f"--host {host} is not a loopback address: the local API checks no credentials, "
            "so every caller on the network would act as its identity; use 127.0.0.1, or "
            "add --allow-remote if you really mean it"
        )
    server = ThreadingHTTPServer((host, port), ApiRequestHandler)
    server.identity = identity or LocalIdentity()  # type: ignore[attr-defined]
    server.own_names = frozenset({host.lower().strip("[]"), "localhost"})  # type: ignore[attr-defined]
    return server
