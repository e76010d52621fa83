"""A small HTTP adapter that serves the deployed API's handler on the loopback.

It turns each request into an API Gateway REST proxy event and calls the
same ``functions.job_cost_api.handler``. It signs nothing and checks no
credentials: it trusts the loopback caller, and says so when it starts.

The handler fails closed (no matching ``ledger.access`` rule: 403), so local mode
gives every request an explicit identity, ``LOCAL_CALLER_ARN``, and the emulator's
configuration an admin rule for it (``with_local_admin``). A request may name another
caller ARN in the ``X-Costtracker-Caller-Arn`` header to try the access rules locally.
"""

from __future__ import annotations

import json
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from costtracker.lambda_context import FakeLambdaContext

# No AWS account has id 000000000000: this identity exists in local mode only.
LOCAL_CALLER_ARN = "arn:aws:iam::000000000000:user/costtracker-local"
CALLER_HEADER = "X-Costtracker-Caller-Arn"


def with_local_admin(ledger_config_json: str) -> str:
    """The configuration with a first rule making the local identity an admin."""
    config = json.loads(ledger_config_json or "{}")
    access = config.setdefault("access", {})
    rules = [r for r in access.get("rules", []) if r.get("arn_pattern") != LOCAL_CALLER_ARN]
    access["rules"] = [{"arn_pattern": LOCAL_CALLER_ARN, "role": "admin"}, *rules]
    return json.dumps(config)


def proxy_event(
    method: str,
    raw_path: str,
    headers: dict[str, str],
    body: str | None = None,
    caller_arn: str = LOCAL_CALLER_ARN,
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
            "identity": {"sourceIp": "127.0.0.1", "caller": "loopback", "userArn": caller_arn},
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
        from functions.job_cost_api.handler import app

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
        caller = self.headers.get(CALLER_HEADER) or LOCAL_CALLER_ARN
        event = proxy_event(method, self.path, dict(self.headers.items()), body, caller)
        response = handler(event, FakeLambdaContext("job_cost_api"))  # type: ignore[arg-type]
        headers = {k: str(v) for k, v in (response.get("headers") or {}).items()}
        headers.setdefault("Content-Type", "application/json")
        self._send(int(response["statusCode"]), response.get("body") or "", headers)


def serve(host: str, port: int) -> ThreadingHTTPServer:
    return ThreadingHTTPServer((host, port), ApiRequestHandler)
