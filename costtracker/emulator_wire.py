"""DynamoDB requests and responses on the embedded emulator as plain JSON.

moto reads every request and writes every response by walking the operation's
botocore shapes, value by value: for a ledger that reads and writes whole items, that
walk cost more than the operation itself (a Query answering 100 instance heads spent
most of its time serializing them). DynamoDB's wire format is JSON whose attribute
values are already typed (``{"S": ...}``, ``{"N": ...}``), and the only values a shape
walk changes are binaries (base64) and timestamps, which these operations' items and
answers do not carry unless an item holds a binary. So, for the item operations, a
request without a binary attribute is ``json.loads`` of its body and an answer without
bytes is ``json.dumps`` of moto's result; anything else takes moto's own path.

Before either path, moto turns its answer into plain values (``dynamo_to_dict``), one
recursive call per value, each of which imports a module and asks five questions of
it. ``plain`` answers the common values (strings, dicts, lists, typed values other than
binaries) itself and hands anything else to moto's function.

``VERIFY`` (tests) runs moto's path too and fails on any difference:
``tests/integration/test_emulator_speedups.py`` replays a scenario that way.
"""

from __future__ import annotations

import json
from typing import Any

FAST_ACTIONS = frozenset(
    {"BatchGetItem", "GetItem", "PutItem", "Query", "TransactWriteItems", "UpdateItem"}
)
CONTENT_TYPE = "application/x-amz-json-1.0"
# Tests turn the fast path off, or compare it with moto's own on every call.
ENABLED = True
VERIFY = False
MISMATCHES: list[str] = []  # what VERIFY found, besides failing the call
ANSWERED = {"requests": 0, "answers": 0}  # calls the fast paths took


class WireMismatch(AssertionError):
    """The fast path and moto's own path disagreed (VERIFY mode)."""


class _NotJson(Exception):
    pass


def _refuse(value: Any) -> Any:
    raise _NotJson(type(value).__name__)


def _may_hold_binary(data: bytes) -> bool:
    return b'"B"' in data or b'"BS"' in data


def plain_values(moto_to_dict: Any) -> Any:
    """moto's ``dynamo_to_dict`` with its common cases answered first (same results)."""
    from moto.dynamodb.models.dynamo_type import DynamoType, LimitedSizeDict

    maps = (dict, LimitedSizeDict)
    binaries = ("B", "BS")

    def plain(obj: Any) -> Any:
        kind = type(obj)
        if kind is str:
            return obj
        if kind is DynamoType and obj.type not in binaries:
            return {obj.type: plain(obj.value)}
        if kind in maps:
            return {k: plain(v) for k, v in obj.items()}
        if kind is list:
            return [plain(v) for v in obj]
        return moto_to_dict(obj)

    plain.__wrapped__ = moto_to_dict  # type: ignore[attr-defined]
    return plain


def patch_moto_wire() -> None:
    """Install the JSON fast paths once per process (idempotent)."""
    from moto.dynamodb import responses
    from moto.dynamodb.responses import DynamoHandler

    if getattr(DynamoHandler, "_costtracker_wire", False):
        return
    responses.dynamo_to_dict = plain_values(responses.dynamo_to_dict)  # type: ignore[attr-defined]
    parse_parameters = DynamoHandler.parse_parameters
    serialized = DynamoHandler.serialized

    def fast_parse(self: Any, request: Any) -> None:
        data = request.data
        if not ENABLED or self._get_action() not in FAST_ACTIONS or _may_hold_binary(data):
            parse_parameters(self, request)
            return
        try:
            params = json.loads(data)
        except ValueError:
            parse_parameters(self, request)
            return
        if not isinstance(params, dict):
            parse_parameters(self, request)
            return
        if VERIFY:
            parse_parameters(self, request)
            if self.params != params:
                MISMATCHES.append(f"request of {self._get_action()}: {self.params} != {params}")
                raise WireMismatch(MISMATCHES[-1])
        ANSWERED["requests"] += 1
        self.params = params

    def fast_serialized(self: Any, action_result: Any) -> Any:
        result = getattr(action_result, "result", None)
        if (
            not ENABLED
            or isinstance(result, Exception)
            or not isinstance(result, dict)
            or self._get_action() not in FAST_ACTIONS
        ):
            return serialized(self, action_result)
        try:
            body = json.dumps(result, default=_refuse)
        except _NotJson:
            return serialized(self, action_result)
        headers = {"Content-Type": CONTENT_TYPE}
        headers.update(self.response_headers)
        if VERIFY:
            status, moto_headers, moto_body = serialized(self, action_result)
            if (status, moto_headers, json.loads(moto_body)) != (200, headers, json.loads(body)):
                action = self._get_action()
                MISMATCHES.append(f"answer of {action}: {moto_headers} {moto_body!r} != {body}")
                raise WireMismatch(MISMATCHES[-1])
        ANSWERED["answers"] += 1
        return 200, headers, body

    DynamoHandler.parse_parameters = fast_parse  # type: ignore[method-assign]
    DynamoHandler.serialized = fast_serialized  # type: ignore[method-assign]
    DynamoHandler._costtracker_wire = True  # type: ignore[attr-defined]
