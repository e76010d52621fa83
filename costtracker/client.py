"""A small client of the job-cost API: the local demo's (unsigned, loopback) or a
deployed one (SigV4-signed with the caller's AWS credentials)."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlencode, urlsplit

DEFAULT_ENDPOINT = "http://127.0.0.1:8080"


class ApiError(Exception):
    def __init__(self, status: int, body: Any) -> None:
        message = body.get("message") if isinstance(body, dict) else None
        super().__init__(f"HTTP {status}: {message or body}")
        self.status = status
        self.body = body


class ApiClient:
    def __init__(self, endpoint: str | None = None, sign: bool | None = None) -> None:
        self.endpoint = (
            endpoint or os.environ.get("COSTTRACKER_ENDPOINT") or DEFAULT_ENDPOINT
        ).rstrip("/")
        host = urlsplit(self.endpoint).hostname or ""
        self._sign = host.endswith(".amazonaws.com") if sign is None else sign

    def headers_for(
        self,
        method: str,
        url: str,
        data: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> dict[str, str]:
        """The headers to send: SigV4-signed with the caller's credentials for a deployed
        API, as given for the local one."""
        headers = dict(headers or {})
        return self._signed(method, url, data, headers) if self._sign else headers

    def request(
        self, method: str, path: str, query: dict[str, Any] | None = None, body: Any = None
    ) -> Any:
        params = {k: v for k, v in (query or {}).items() if v is not None}
        url = self.endpoint + path + (f"?{urlencode(params)}" if params else "")
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if data else {}
        if self._sign:
            headers = self._signed(method, url, data, headers)
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            raw = error.read()
            try:
                parsed = json.loads(raw)
            except ValueError:
                parsed = raw.decode(errors="replace")
            raise ApiError(error.code, parsed) from None

    def _signed(
        self, method: str, url: str, data: bytes | None, headers: dict[str, str]
    ) -> dict[str, str]:
        import boto3
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        session = boto3.session.Session()
        credentials = session.get_credentials()
        if credentials is None:
            raise ApiError(0, "no AWS credentials to sign the request with")
        host = urlsplit(url).hostname or ""
        amazon = host.endswith(".amazonaws.com") and host.count(".") >= 3
        region = host.split(".")[2] if amazon else session.region_name
        aws_request = AWSRequest(method=method, url=url, data=data, headers=headers)
        SigV4Auth(credentials, "execute-api", region or "us-east-1").add_auth(aws_request)
        return dict(aws_request.headers.items())
