"""Waiting for a local service (the embedded emulator, the local API, a test's server).

A local server answers within a second on an idle machine and may take far longer on a
loaded one (CI, shared cores): no fixed short timeout. Wait up to a generous bound,
then fail with one line that says what was waited for, for how long, and the last
error.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import TypeVar

READY_WITHIN_S = 120.0
T = TypeVar("T")


class NotReady(TimeoutError):
    """A local service did not answer within the bound."""


def wait_until(
    attempt: Callable[[], T],
    what: str,
    within_s: float = READY_WITHIN_S,
    retry_on: tuple[type[BaseException], ...] = (OSError,),
) -> T:
    """``attempt()``'s result once it stops raising ``retry_on``; ``NotReady`` after
    ``within_s`` seconds."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            return attempt()
        except retry_on as exc:
            if time.monotonic() >= deadline:
                raise NotReady(f"waited {within_s:.0f} s for {what}; last error: {exc}") from exc
            time.sleep(0.2)


def answer(
    request: urllib.request.Request | str, what: str, within_s: float = READY_WITHIN_S
) -> tuple[int, bytes]:
    """The status and body a local HTTP service answers (an HTTP error status is an
    answer); retried while it refuses connections or does not answer in time."""
    deadline = time.monotonic() + within_s

    def once() -> tuple[int, bytes]:
        timeout = max(deadline - time.monotonic(), 1.0)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return int(response.status), bytes(response.read())
        except urllib.error.HTTPError as error:
            return int(error.code), bytes(error.read())

    return wait_until(once, what, within_s)
