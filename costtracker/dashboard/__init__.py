"""The cost dashboard: one static page (hand-written JS drawing inline SVG, no framework,
no CDN) that reads the job-cost API from its own origin.

``costtracker demo`` serves it beside the local API; ``costtracker dashboard`` serves it
and forwards the page's API calls to a deployed API, signed with the user's credentials.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

UI_PREFIX = "/ui/"
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
# Nothing but this origin: no CDN, no inline script, no framing by another site.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


def asset(path: str) -> tuple[bytes, dict[str, str]] | None:
    """The page (``/``) or a file under ``/ui/``, with its headers; None if not ours."""
    if path in ("/", "/index.html"):
        name = "index.html"
    elif path.startswith(UI_PREFIX):
        name = path[len(UI_PREFIX) :]
    else:
        return None
    if not name or "/" in name or name.startswith(".") or "\\" in name:
        return None
    suffix = name[name.rfind(".") :] if "." in name else ""
    if suffix not in _TYPES:
        return None
    try:
        body = resources.files(__package__).joinpath("static", name).read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return None
    return body, {"Content-Type": _TYPES[suffix], **SECURITY_HEADERS}


def send_asset(handler: Any, path: str) -> bool:
    """Answer a GET on ``handler`` (a BaseHTTPRequestHandler) from the page's files; False
    when the path is not the page's (the caller then treats it as an API call)."""
    found = asset(path)
    if found is None:
        if path.startswith(UI_PREFIX):
            _reply(handler, 404, b"not found", {"Content-Type": "text/plain"})
            return True
        return False
    body, headers = found
    _reply(handler, 200, body, headers)
    return True


def _reply(handler: Any, status: int, body: bytes, headers: dict[str, str]) -> None:
    handler.send_response(status)
    for key, value in headers.items():
        handler.send_header(key, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)
