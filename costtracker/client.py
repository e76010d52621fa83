"""A small client of the job-cost API: the local demo's (unsigned, loopback) or a
deployed one (SigV4-signed with the caller's AWS credentials).

Path segments (job ids) are percent-encoded here, so any id (spaces, ``?``, ``/``,
non-ASCII) names exactly that job. Failures are ``ApiError`` (the API answered an
error) or ``CliError`` (it could not be asked), each one readable line.
"""

from __future__ import annotations

import http.client
import json
import os
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from costtracker.errors import CliError

DEFAULT_ENDPOINT = "http://127.0.0.1:8080"
_HINTS = {
    401: "check your AWS credentials",
}
_FIELD_HINTS = {
    "job_id": "list the jobs with `costtracker jobs ls`",
    "budget_id": "list the budgets with `costtracker budgets ls`",
    "instance_type": "give a price with a CDK context override",
}


class ApiError(Exception):
    """The API answered 4xx/5xx; ``str()`` is a sentence from its error body."""

    def __init__(self, status: int, body: Any) -> None:
        self.status = status
        self.body = body
        self.field = body.get("field") if isinstance(body, dict) else None
        super().__init__(self.sentence())

    def sentence(self) -> str:
        body = self.body
        message = None
        if isinstance(body, dict):  # the API's shape; API Gateway's own is {"message"}
            message = body.get("message") or body.get("Message")
        if not message:
            text = body if isinstance(body, str) else json.dumps(body)
            message = " ".join(text.split())[:200] or "no details"
            if text.lstrip().startswith("<"):
                message = "an HTML page, not the job-cost API: check --endpoint"
        message = " ".join(str(message).split())
        hint = _FIELD_HINTS.get(self.field or "") if self.status == 404 else None
        hint = hint or _HINTS.get(self.status)
        return f"{message} (HTTP {self.status}{'; ' + hint if hint else ''})"


def segment(value: str) -> str:
    """One path segment, percent-encoded (UTF-8), ``/`` included."""
    return quote(value, safe="")


def check_endpoint(endpoint: str) -> str:
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CliError(
            f"--endpoint {endpoint!r}: give a URL with its scheme, e.g. http://127.0.0.1:8080 "
            "or https://ID.execute-api.REGION.amazonaws.com/prod"
        )
    try:
        parts.port  # noqa: B018  (raises ValueError on a bad port)
    except ValueError as exc:
        raise CliError(f"--endpoint {endpoint!r}: the port is not a number 0-65535") from exc
    return endpoint.rstrip("/")


class ApiClient:
    def __init__(self, endpoint: str | None = None, sign: bool | None = None) -> None:
        self.endpoint = check_endpoint(
            endpoint or os.environ.get("COSTTRACKER_ENDPOINT") or DEFAULT_ENDPOINT
        )
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

    def path(self, *segments: str) -> str:
        return "/" + "/".join(segment(s) for s in segments)

    def request(
        self, method: str, path: str, query: dict[str, Any] | None = None, body: Any = None
    ) -> Any:
        params = {k: v for k, v in (query or {}).items() if v is not None}
        url = self.endpoint + path + (f"?{urlencode(params)}" if params else "")
        data = json.dumps(body).encode() if body is not None else None
        headers = self.headers_for(
            method, url, data, {"Content-Type": "application/json"} if data else {}
        )
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                raw = response.read()
        except urllib.error.HTTPError as error:
            raw = error.read()
            try:
                parsed = json.loads(raw)
            except ValueError:
                parsed = raw.decode(errors="replace")
            raise ApiError(error.code, parsed) from None
        except urllib.error.URLError as error:
            raise self._unreachable(error.reason) from None
        except TimeoutError as error:
            raise self._unreachable(error) from None
        except (http.client.HTTPException, ConnectionError) as error:
            raise self._unreachable(error) from None
        try:
            return json.loads(raw or b"null")
        except ValueError:
            raise CliError(
                f"{self.endpoint} answered something that is not JSON: is it the job-cost API?",
                exit_code=1,
            ) from None

    def _unreachable(self, reason: Any) -> CliError:
        why = getattr(reason, "strerror", None) or str(reason) or type(reason).__name__
        local = urlsplit(self.endpoint).hostname in ("127.0.0.1", "localhost", "::1")
        todo = (
            "start it with `costtracker demo` (in another terminal), or give --endpoint"
            if local
            else "check --endpoint (or $COSTTRACKER_ENDPOINT) and your network"
        )
        return CliError(f"cannot reach the API at {self.endpoint} ({why}): {todo}", exit_code=1)

    def _signed(
        self, method: str, url: str, data: bytes | None, headers: dict[str, str]
    ) -> dict[str, str]:
        import boto3
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        session = boto3.session.Session()
        credentials = session.get_credentials()
        if credentials is None:
            raise CliError(
                "no AWS credentials to sign the request with: configure a profile "
                "(aws configure, AWS_PROFILE) or export AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY",
                exit_code=1,
            )
        host = urlsplit(url).hostname or ""
        amazon = host.endswith(".amazonaws.com") and host.count(".") >= 3
        region = host.split(".")[2] if amazon else session.region_name
        aws_request = AWSRequest(method=method, url=url, data=data, headers=headers)
        SigV4Auth(credentials, "execute-api", region or "us-east-1").add_auth(aws_request)
        return dict(aws_request.headers.items())
