"""The ledger table's request parameters: each name and string value said once."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import TypeSerializer

from shared.adapters.table import Above, Absent, Below, Put, Update, VersionIs
from shared.adapters.table_requests import write_request

_SER = TypeSerializer()


def to(item: Any) -> dict[str, Any]:
    return {k: _SER.serialize(v) for k, v in item.items()}


def test_a_raise_to_at_least_names_its_attribute_and_value_once() -> None:
    at = "2026-11-02T03:08:55+00:00"
    op = Update(
        "JOB#j",
        "R#1",
        add={"n": Decimal(1), "m": Decimal(1)},
        set={"last_event_at": at, "first_event_at": at},
        set_if_absent={"kind": "rollup"},
        conditions=[Below("last_event_at", at), Above("first_event_at", at)],
    )
    request = write_request("t", to, op)
    assert request["ExpressionAttributeNames"] == {
        "#n0": "last_event_at",
        "#n1": "first_event_at",
        "#n2": "kind",
        "#n3": "n",
        "#n4": "m",
    }
    # One string placeholder for the four uses of ``at``; numbers keep one each.
    assert request["ExpressionAttributeValues"] == {
        ":v0": {"S": at},
        ":v1": {"S": "rollup"},
        ":v2": {"N": "1"},
        ":v3": {"N": "1"},
    }
    assert request["ConditionExpression"] == (
        "(attribute_not_exists(#n0) OR #n0 < :v0) AND (attribute_not_exists(#n1) OR #n1 > :v0)"
    )
    assert request["UpdateExpression"] == (
        "SET #n0 = :v0, #n1 = :v0, #n2 = if_not_exists(#n2, :v1) ADD #n3 :v2, #n4 :v3"
    )


def test_a_put_with_a_version_or_absence_condition() -> None:
    absent = write_request("t", to, Put({"pk": "a", "sk": "b", "version": 1}, [Absent()]))
    assert absent["ConditionExpression"] == "attribute_not_exists(#n0)"
    assert absent["ExpressionAttributeNames"] == {"#n0": "pk"}
    assert "ExpressionAttributeValues" not in absent
    versioned = write_request("t", to, Put({"pk": "a", "sk": "b", "version": 3}, [VersionIs(2)]))
    assert versioned["ConditionExpression"] == "#n0 = :v0"
    assert versioned["ExpressionAttributeValues"] == {":v0": {"N": "2"}}
    assert versioned["Item"]["version"] == {"N": "3"} and versioned["TableName"] == "t"
