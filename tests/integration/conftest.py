"""Integration tests run against moto: in-process (mock_aws) or the embedded server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SCENARIOS = Path(__file__).parent.parent / "scenarios"


@pytest.fixture(autouse=True)
def aws_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.setenv(key, "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)


def results(document: dict[str, Any]) -> dict[str, Any]:
    """A replay document without its ``diagnostics`` (how the replay ran)."""
    return {k: v for k, v in document.items() if k != "diagnostics"}


def scenario_dict(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCENARIOS / name).read_text())
    return data


class CallCounter:
    """Counts AWS API calls by (service, operation) with botocore's event hooks."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.items_written: list[int] = []  # items per DynamoDB write call

    def __call__(self, event_name: str, **kwargs: Any) -> None:
        # event_name: before-call.<service>.<Operation> or before-parameter-build.<...>
        stage, service, operation = event_name.split(".", 2)
        if stage == "before-parameter-build":
            if service == "dynamodb" and operation == "TransactWriteItems":
                self.items_written.append(len(kwargs.get("params", {}).get("TransactItems", [])))
            return
        self.calls.append((service, operation))
        if service == "dynamodb" and operation in ("PutItem", "UpdateItem", "DeleteItem"):
            self.items_written.append(1)

    def clear(self) -> None:
        self.calls.clear()
        self.items_written.clear()

    def count(self, service: str, *operations: str) -> int:
        return sum(1 for s, o in self.calls if s == service and (not operations or o in operations))


@pytest.fixture
def call_counter() -> Iterator[CallCounter]:
    import boto3

    counter = CallCounter()
    session = boto3._get_default_session()
    session.events.register("before-call.*.*", counter)
    session.events.register("before-parameter-build.*.*", counter)
    yield counter
    session.events.unregister("before-call.*.*", counter)
    session.events.unregister("before-parameter-build.*.*", counter)
