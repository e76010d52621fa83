"""Fuzz tier: property-based tests (hypothesis, schemathesis) with bounded examples."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

_FAKE_AWS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
}


@pytest.fixture(autouse=True, scope="module")
def _fake_aws_environment() -> Iterator[None]:
    """Fake credentials so nothing here can reach a real AWS account.

    Module-scoped (hypothesis rejects function-scoped fixtures around @given), so the
    environment is saved and restored by hand rather than with ``monkeypatch``.
    """
    names = [*_FAKE_AWS, "AWS_ENDPOINT_URL", "AWS_PROFILE"]
    saved = {name: os.environ.get(name) for name in names}
    os.environ.update(_FAKE_AWS)
    os.environ.pop("AWS_ENDPOINT_URL", None)
    os.environ.pop("AWS_PROFILE", None)
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
