"""``costtracker dashboard --endpoint URL``: the dashboard on the loopback for a deployed
API. The page's API calls (GET only) are forwarded to the endpoint and signed there with
the user's AWS credentials (SigV4, as the CLI signs), so no secret reaches the page.

It listens only on a loopback address (it signs with the user's credentials, so anyone
who could reach it would act as the user). A request whose Host is not this loopback
address is refused (another site's page cannot use the proxy through DNS rebinding), and
only GET is forwarded: the dashboard reads. Its own mistakes are one line and an exit
code, as every ``costtracker`` command's.
"""

from __future__ import annotations

import sys
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from costtracker.client import ApiClient, ApiError, check_endpoint
from costtracker.dashboard import send_asset
from costtracker.errors import CliError

FORWARDED_HEADERS = ("Content-Type", "Cache-Control")


class DashboardProxy(ThreadingHTTPServer):
    def __init__(self, address: tuple[str, int], client: ApiClient) -> None:
        super().__init__(address, ProxyHandler)
        self.client = client
        host, port = str(self.server_address[0]), int(self.server_address[1])
        self.allowed_hosts = {f"{host}:{port}", f"localhost:{port}", f"127.0.0.1:{port}"}


class ProxyHandler(BaseHTTPRequestHandler):
    server: DashboardProxy
    server_version = "costtracker-dashboard"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _json(self, status: int, message: str) -> None:
        import json

        from shared.api.errors import ApiProblem

        body = json.dumps(ApiProblem(status, message).body()).encode()  # the API's shape
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if (self.headers.get("Host") or "") not in self.server.allowed_hosts:
            self._json(403, "Host: this proxy answers only its own loopback address")
            return
        path = urlsplit(self.path).path
        if send_asset(self, path):
            return
        self._forward()

    def _refuse(self) -> None:
        self._json(405, "the dashboard proxy forwards only GET (use the CLI to change things)")

    do_POST = do_PUT = do_DELETE = do_PATCH = _refuse

    def _forward(self) -> None:
        client = self.server.client
        url = client.endpoint + self.path
        try:
            headers = client.headers_for("GET", url, None, {"Accept": "application/json"})
        except (ApiError, CliError) as error:
            self._json(502, f"cannot sign the request: {error}")
            return
        request = urllib.request.Request(url, method="GET", headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                status, body, upstream = response.status, response.read(), response.headers
        except urllib.error.HTTPError as error:
            status, body, upstream = error.code, error.read(), error.headers
        except (urllib.error.URLError, TimeoutError, OSError) as error:
            self._json(502, f"the API at {client.endpoint} did not answer: {error}")
            return
        self.send_response(status)
        for key in FORWARDED_HEADERS:
            if upstream.get(key):
                self.send_header(key, upstream[key])
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def make_proxy(endpoint: str, host: str, port: int, sign: bool | None = None) -> DashboardProxy:
    return DashboardProxy((host, port), ApiClient(endpoint, sign=sign))


def run_dashboard(endpoint: str, host: str, port: int) -> int:
    """Serve until interrupted; a bad endpoint, a non-loopback host or a taken port is a
    ``CliError`` (one line, exit 2) before anything listens."""
    from costtracker.local_api import is_loopback

    endpoint = check_endpoint(endpoint)
    if not is_loopback(host):
        raise CliError(
            f"--host {host} is not a loopback address: the dashboard signs its calls with "
            "your AWS credentials, so anyone who reached it would act as you; use 127.0.0.1"
        )
    try:
        server = make_proxy(endpoint, host, port)
    except OSError as error:
        raise CliError(
            f"cannot listen on {host}:{port} ({error.strerror or error}): pick another port "
            "with --port"
        ) from error
    bound = f"http://{server.server_address[0]!s}:{server.server_address[1]}/"
    signing = "signed with your AWS credentials (SigV4)" if server.client._sign else "unsigned"
    print(
        f"Dashboard on {bound} for {server.client.endpoint}; its API calls are {signing}. "
        "Ctrl-C stops it.",
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    finally:
        server.server_close()
    return 0
