"""A small HTTP adapter that serves the deployed API's handler on the loopback.

It turns each request into an API Gateway REST proxy event and calls the
same ``functions.job_cost_api.handler``. It signs nothing and checks no
credentials: it trusts the loopback caller, and says so when it starts.
"""

from __future__ import annotations

import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from costtracker.lambda_context import FakeLambdaContext

# One request at a time through the handler, as one Lambda container runs them: the
# resolver keeps the current event on the (module-global) app, and the dashboard's page
# sends several requests at once.
_HANDLER_LOCK = threading.Lock()


def proxy_event(
    method: str, raw_path: str, headers: dict[str, str], body: str | None = None
) -> dict[str, Any]:
    parts = urlsplit(raw_path)
    multi = parse_qs(parts.query, keep_blank_values=True)
    return {
        "resource": "/{proxy+}",
        "path": parts.path,
        "httpMethod": method,
        "headers": headers,
        "multiValueHeaders": {k: [v] for k, v in headers.items()},
        "queryStringParameters": {k: v[-1] for k, v in multi.items()} or None,
        "multiValueQueryStringParameters": multi or None,
        "pathParameters": {"proxy": parts.path.lstrip("/")},
        "stageVariables": None,
        "body": body,
        "isBase64Encoded": False,
        "requestContext": {
            "requestId": str(uuid.uuid4()),
            "stage": "local",
            "httpMethod": method,
            "path": parts.path,
            "resourcePath": "/{proxy+}",
            "identity": {"sourceIp": "127.0.0.1", "caller": "loopback", "userArn": None},
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

    def do_GET(self) -> None:
        from costtracker.dashboard import send_asset
        from functions.job_cost_api.handler import app

        if send_asset(self, urlsplit(self.path).path):  # the dashboard: / and /ui/...
            return
        if urlsplit(self.path).path == "/openapi.json":
            self._send(200, app.get_openapi_json_schema(title="costtracker job-cost API"))
            return
        self._forward("GET")

    def do_PUT(self) -> None:
        self._forward("PUT")

    def do_DELETE(self) -> None:
        self._forward("DELETE")

    def _forward(self, method: str) -> None:
        from functions.job_cost_api.handler import handler

        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else None
        event = proxy_event(method, self.path, dict(self.headers.items()), body)
        with _HANDLER_LOCK:
            response = handler(event, FakeLambdaContext("job_cost_api"))  # type: ignore[arg-type]
        headers = {k: str(v) for k, v in (response.get("headers") or {}).items()}
        headers.setdefault("Content-Type", "application/json")
        self._send(int(response["statusCode"]), response.get("body") or "", headers)


def serve(host: str, port: int) -> ThreadingHTTPServer:
    return ThreadingHTTPServer((host, port), ApiRequestHandler)
