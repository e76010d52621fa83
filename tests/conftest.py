"""Every test tier: handlers' EMF metrics off (they would print to stdout), botocore's
client-side validation on for every request the adapters build (deployed functions and
local runs skip it: ``shared.adapters.accounts.client_config``), and the handlers' log
lines written to the running test's own output."""

import logging
import os
import sys
from collections.abc import Iterator

import pytest

os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
os.environ.setdefault("COSTTRACKER_VALIDATE_REQUESTS", "1")


@pytest.fixture(autouse=True)
def _handler_logs_to_this_test() -> Iterator[None]:
    """Powertools' logger writes to the stdout of the moment it was made: under pytest,
    the captured output of the test that first imported a handler, closed when that
    test ended. Later tests of the same worker that logged through it failed with
    "I/O operation on closed file" (seen with ``pytest -n 2`` without ``--dist
    loadfile``: 38 failures and 51 errors)."""
    handlers = [
        h for h in logging.getLogger("costtracker").handlers if type(h) is logging.StreamHandler
    ]
    for handler in handlers:
        handler.stream = sys.stdout  # not setStream: it flushes the old stream, closed
    yield
