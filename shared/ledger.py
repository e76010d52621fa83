"""The only DynamoDB code: the ledger repository (access patterns in ``ledger_schema``).

Instance records are written whole, guarded by a version number (optimistic
locking), so concurrent events for one instance never lose an update; every
other write is an idempotent ``SET``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any, Protocol

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from shared import ledger_schema as schema
from shared.budgets import Budget
from shared.costing import accrues_ebs, fold_segments, instance_cost, object_spans
from shared.models import CheckpointObject, InstanceRecord, Rate

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient
else:
    DynamoDBClient = Any

UNTRACKED_TTL_SECONDS = 30 * 86400
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class VersionConflict(Exception):
    """Another writer saved the instance record first; re-read and apply again."""


@dataclass(frozen=True)
class JobItems:
    job_id: str
    instances: tuple[InstanceRecord, ...]
    active_days: tuple[str, ...]
    checkpoints: tuple[CheckpointObject, ...] = ()


class Ledger(Protocol):
    """What the services need from storage; ``InMemoryLedger`` in tests is its twin."""

    def get_instance(self, instance_id: str) -> InstanceRecord | str | None:
        """The record, the string ``"untracked"`` for an ignored instance, or None."""

    def save_instance(self, record: InstanceRecord, expected_version: int | None) -> None: ...

    def mark_untracked(self, instance_id: str, instance_type: str, now: datetime) -> None: ...

    def touch_job_days(self, job_id: str, days: Iterable[date], tags: dict[str, str]) -> None: ...

    def job_items(self, job_id: str) -> JobItems | None: ...

    def jobs_active_on(self, day: date) -> list[str]: ...

    def jobs_by_tag(self, key: str, value: str, first: date, last: date) -> list[str]: ...

    def open_instances(self) -> Iterator[InstanceRecord]: ...

    def accruing_jobs(self) -> dict[str, dict[str, str]]: ...

    def unpriced_instances(self) -> Iterator[InstanceRecord]: ...

    def unpriced_checkpoints(self) -> Iterator[CheckpointObject]: ...

    def get_price(self, key: str) -> Rate | None: ...

    def put_price(self, key: str, rate: Rate) -> None: ...

    def claim_once(self, key: str, expires_at: datetime) -> bool:
        """True for the first caller only (alert dedup across concurrent runs)."""

    def get_checkpoint(self, bucket: str, key: str) -> CheckpointObject | None: ...

    def save_checkpoint(self, obj: CheckpointObject, expected_version: int | None) -> None: ...

    def record_unmatched(self, bucket: str, key: str, event_id: str, at: datetime) -> None:
        """Remember an object in a checkpoint bucket that names no job (idempotent)."""

    def unmatched_objects(self) -> list[tuple[str, str]]: ...

    def stored_budgets(self) -> dict[str, Budget | None]:
        """Budgets set through the API by id; None marks one deleted through the API."""

    def put_budget(self, budget: Budget) -> None: ...

    def put_summary(self, day: date, summary: dict[str, Any]) -> None: ...

    def put_reconciliation(self, day: date, result: dict[str, Any]) -> None: ...

    def get_reconciliations(self, days: Sequence[date]) -> dict[date, dict[str, Any]]: ...

    def get_summaries(self, days: Sequence[date]) -> dict[date, dict[str, Any]]: ...

    def delete_budget(self, budget_id: str) -> None: ...

    def put_budget_change(
        self, budget_id: str, after: Budget | None, change: dict[str, Any]
    ) -> None:
        """Set (or, with ``after`` None, delete) a stored budget and record ``change``
        in its history, in one transaction."""

    def budget_history(self, budget_id: str) -> list[dict[str, Any]]:
        """The recorded changes of a budget, oldest first."""


def instance_key(instance_id: str) -> dict[str, str]:
    return {schema.PARTITION_KEY: f"INST#{instance_id}", schema.SORT_KEY: "INSTANCE"}


def instance_item(record: InstanceRecord) -> dict[str, Any]:
    """The stored form of a record: the record itself plus its derived, queryable facts.

    Closed segments are stored with their cost; the open segment (if any) is
    marked for the open-index and priced when read.
    """
    iid = record.instance_id
    latest = max((t.at for t in record.transitions), default=EPOCH)
    cost = instance_cost(record, latest)  # closed segments do not depend on "now"
    item: dict[str, Any] = {
        **instance_key(iid),
        "kind": "instance",
        "job_id": record.job_id,
        "instance_type": record.profile.instance_type,
        "version": record.version,
        "record": record.model_dump_json(),
        "segments": [
            {
                "start": p.segment.start.isoformat(),
                "end": p.segment.end.isoformat(),
                "billed_seconds": p.billed_seconds,
                "list_usd": p.list_usd,
                "effective_usd": p.effective_usd,
            }
            for p in cost.segments
            if p.segment.end is not None
        ],
        schema.JOB_INDEX.partition_key: f"JOB#{record.job_id}",
        schema.JOB_INDEX.sort_key: f"INST#{iid}",
    }
    open_segments = [
        s for s in fold_segments(iid, record.transitions, record.spot_notices) if s.end is None
    ]
    if open_segments:
        item[schema.OPEN_INDEX.partition_key] = "OPEN"
        item[schema.OPEN_INDEX.sort_key] = f"{record.job_id}#{iid}"
    elif accrues_ebs(record):  # stopped, not terminated: its volumes still cost
        item[schema.OPEN_INDEX.partition_key] = "ACCRUING"
        item[schema.OPEN_INDEX.sort_key] = f"{record.job_id}#{iid}"
    if cost.unpriced:
        item[schema.UNPRICED_INDEX.partition_key] = "UNPRICED"
        item[schema.UNPRICED_INDEX.sort_key] = f"{record.profile.instance_type}#{iid}"
    return item


_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


def _to_ddb(item: dict[str, Any]) -> dict[str, Any]:
    return {k: _serializer.serialize(v) for k, v in item.items()}


def _from_ddb(item: dict[str, Any]) -> dict[str, Any]:
    return {k: _deserializer.deserialize(v) for k, v in item.items()}


def _record_of(item: dict[str, Any]) -> InstanceRecord:
    record = InstanceRecord.model_validate_json(item["record"])
    return record.model_copy(update={"version": int(item["version"])})


class DynamoDbLedger:
    """``Ledger`` over one DynamoDB table (single-table design, see ``ledger_schema``)."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name

    # -- instance records (access pattern 1) ---------------------------------
    def get_instance(self, instance_id: str) -> InstanceRecord | str | None:
        response = self._client.get_item(
            TableName=self._table, Key=_to_ddb(instance_key(instance_id)), ConsistentRead=True
        )
        if "Item" not in response:
            return None
        item = _from_ddb(response["Item"])
        if item.get("kind") == "untracked":
            return "untracked"
        return _record_of(item)

    def save_instance(self, record: InstanceRecord, expected_version: int | None) -> None:
        item = instance_item(record.model_copy(update={"version": (expected_version or 0) + 1}))
        if expected_version is None:
            condition = "attribute_not_exists(pk) OR kind = :untracked"
            values: dict[str, Any] = {":untracked": "untracked"}
        else:
            condition = "version = :expected"
            values = {":expected": expected_version}
        try:
            self._client.put_item(
                TableName=self._table,
                Item=_to_ddb(item),
                ConditionExpression=condition,
                ExpressionAttributeValues=_to_ddb(values),
            )
        except self._client.exceptions.ConditionalCheckFailedException as exc:
            raise VersionConflict(record.instance_id) from exc

    def mark_untracked(self, instance_id: str, instance_type: str, now: datetime) -> None:
        item = {
            **instance_key(instance_id),
            "kind": "untracked",
            "instance_type": instance_type,
            schema.TTL_ATTRIBUTE: int(now.timestamp()) + UNTRACKED_TTL_SECONDS,
        }
        self._client.put_item(TableName=self._table, Item=_to_ddb(item))

    # -- job-day markers (access patterns 2-4) -------------------------------
    def touch_job_days(self, job_id: str, days: Iterable[date], tags: dict[str, str]) -> None:
        for day in days:
            iso = day.isoformat()
            names = {"#tags": "tags"}
            values: dict[str, Any] = {
                ":job": job_id,
                ":date": iso,
                ":tags": tags,
                ":jpk": f"JOB#{job_id}",
                ":jsk": f"DAY#{iso}",
                ":dpk": f"DAY#{iso}",
            }
            sets = [
                "job_id = :job",
                "#date = :date",
                "#tags = if_not_exists(#tags, :tags)",
                f"{schema.JOB_INDEX.partition_key} = :jpk",
                f"{schema.JOB_INDEX.sort_key} = :jsk",
                f"{schema.DAY_INDEX.partition_key} = :dpk",
                f"{schema.DAY_INDEX.sort_key} = :job",
                "kind = :kind",
            ]
            names["#date"] = "date"
            values[":kind"] = "job_day"
            for n, (key, index) in enumerate(schema.INDEXED_TAGS.items()):
                if key in tags:
                    values[f":t{n}pk"] = f"{key}#{tags[key]}"
                    values[f":t{n}sk"] = f"{iso}#{job_id}"
                    sets.append(
                        f"{index.partition_key} = if_not_exists({index.partition_key}, :t{n}pk)"
                    )
                    sets.append(f"{index.sort_key} = :t{n}sk")
            self._client.update_item(
                TableName=self._table,
                Key=_to_ddb({schema.PARTITION_KEY: f"JOB#{job_id}", schema.SORT_KEY: f"DAY#{iso}"}),
                UpdateExpression="SET " + ", ".join(sets),
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=_to_ddb(values),
            )

    def _query(self, **kwargs: Any) -> Iterator[dict[str, Any]]:
        paginator = self._client.get_paginator("query")
        for page in paginator.paginate(TableName=self._table, **kwargs):
            for item in page.get("Items", []):
                yield _from_ddb(item)

    def _query_index(
        self, index: schema.Index, pk: str, sk_between: tuple[str, str] | None = None
    ) -> Iterator[dict[str, Any]]:
        condition = "#pk = :pk"
        names = {"#pk": index.partition_key}
        values: dict[str, Any] = {":pk": pk}
        if sk_between is not None:
            condition += " AND #sk BETWEEN :lo AND :hi"
            names["#sk"] = index.sort_key
            values[":lo"], values[":hi"] = sk_between
        return self._query(
            IndexName=index.name,
            KeyConditionExpression=condition,
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=_to_ddb(values),
        )

    def job_items(self, job_id: str) -> JobItems | None:
        instances: list[InstanceRecord] = []
        days: list[str] = []
        checkpoints: list[CheckpointObject] = []
        for item in self._query_index(schema.JOB_INDEX, f"JOB#{job_id}"):
            kind = item.get("kind")
            if kind == "instance":
                instances.append(_record_of(item))
            elif kind == "job_day":
                days.append(str(item["date"]))
            elif kind == "checkpoint":
                checkpoints.append(_checkpoint_of(item))
        if not instances and not days and not checkpoints:
            return None
        return JobItems(
            job_id=job_id,
            instances=tuple(instances),
            active_days=tuple(sorted(days)),
            checkpoints=tuple(checkpoints),
        )

    def jobs_active_on(self, day: date) -> list[str]:
        return [
            str(item["job_id"])
            for item in self._query_index(schema.DAY_INDEX, f"DAY#{day.isoformat()}")
        ]

    def jobs_by_tag(self, key: str, value: str, first: date, last: date) -> list[str]:
        index = schema.INDEXED_TAGS[key]
        items = self._query_index(
            index, f"{key}#{value}", (first.isoformat(), f"{last.isoformat()}~")
        )
        return list(dict.fromkeys(str(item["job_id"]) for item in items))

    def open_instances(self) -> Iterator[InstanceRecord]:
        for item in self._query_index(schema.OPEN_INDEX, "OPEN"):
            yield _record_of(item)

    def accruing_jobs(self) -> dict[str, dict[str, str]]:
        """Jobs whose stopped instances' volumes or stored checkpoints still cost, with the
        tags of their instances where known."""
        jobs: dict[str, dict[str, str]] = {}
        for item in self._query_index(schema.OPEN_INDEX, "ACCRUING"):
            tags = _record_of(item).profile.tags if item.get("kind") == "instance" else {}
            jobs.setdefault(str(item["job_id"]), {}).update(tags)
        return jobs

    def unpriced_instances(self) -> Iterator[InstanceRecord]:
        for item in self._query_index(schema.UNPRICED_INDEX, "UNPRICED"):
            if item.get("kind") == "instance":
                yield _record_of(item)

    def unpriced_checkpoints(self) -> Iterator[CheckpointObject]:
        for item in self._query_index(schema.UNPRICED_INDEX, "UNPRICED"):
            if item.get("kind") == "checkpoint":
                yield _checkpoint_of(item)

    # -- price cache (access pattern 7) ----------------------------------------
    def get_price(self, key: str) -> Rate | None:
        response = self._client.get_item(
            TableName=self._table,
            Key=_to_ddb({schema.PARTITION_KEY: f"PRICE#{key}", schema.SORT_KEY: "PRICE"}),
        )
        if "Item" not in response:
            return None
        return Rate.model_validate_json(_from_ddb(response["Item"])["rate"])

    def put_price(self, key: str, rate: Rate) -> None:
        item = {
            schema.PARTITION_KEY: f"PRICE#{key}",
            schema.SORT_KEY: "PRICE",
            "kind": "price",
            "rate": rate.model_dump_json(),
            "checked_on": rate.checked_on.isoformat(),
        }
        self._client.put_item(TableName=self._table, Item=_to_ddb(item))

    # -- once-only markers -----------------------------------------------------
    def claim_once(self, key: str, expires_at: datetime) -> bool:
        item = {
            schema.PARTITION_KEY: f"ONCE#{key}",
            schema.SORT_KEY: "ONCE",
            "kind": "once",
            schema.TTL_ATTRIBUTE: int(expires_at.timestamp()),
        }
        try:
            self._client.put_item(
                TableName=self._table,
                Item=_to_ddb(item),
                ConditionExpression="attribute_not_exists(pk)",
            )
        except self._client.exceptions.ConditionalCheckFailedException:
            return False
        return True

    # -- checkpoints -------------------------------------------------------------
    def get_checkpoint(self, bucket: str, key: str) -> CheckpointObject | None:
        response = self._client.get_item(
            TableName=self._table, Key=_to_ddb(checkpoint_key(bucket, key)), ConsistentRead=True
        )
        return _checkpoint_of(_from_ddb(response["Item"])) if "Item" in response else None

    def save_checkpoint(self, obj: CheckpointObject, expected_version: int | None) -> None:
        stored = obj.model_copy(update={"version": (expected_version or 0) + 1})
        item = {
            **checkpoint_key(obj.bucket, obj.key),
            "kind": "checkpoint",
            "job_id": obj.job_id,
            "version": stored.version,
            "record": stored.model_dump_json(),
            schema.JOB_INDEX.partition_key: f"JOB#{obj.job_id}",
            schema.JOB_INDEX.sort_key: f"CKPT#{obj.bucket}/{obj.key}",
        }
        if any(span.end is None for span in object_spans(obj)):  # stored: it still costs
            item[schema.OPEN_INDEX.partition_key] = "ACCRUING"
            item[schema.OPEN_INDEX.sort_key] = f"{obj.job_id}#s3://{obj.bucket}/{obj.key}"
        if obj.rate is None and obj.writes:
            item[schema.UNPRICED_INDEX.partition_key] = "UNPRICED"
            item[schema.UNPRICED_INDEX.sort_key] = f"s3#{obj.region}#{obj.bucket}/{obj.key}"
        if expected_version is None:
            condition, values = "attribute_not_exists(pk)", None
        else:
            condition, values = "version = :expected", {":expected": expected_version}
        kwargs: dict[str, Any] = {"ConditionExpression": condition}
        if values:
            kwargs["ExpressionAttributeValues"] = _to_ddb(values)
        try:
            self._client.put_item(TableName=self._table, Item=_to_ddb(item), **kwargs)
        except self._client.exceptions.ConditionalCheckFailedException as exc:
            raise VersionConflict(f"s3://{obj.bucket}/{obj.key}") from exc

    def record_unmatched(self, bucket: str, key: str, event_id: str, at: datetime) -> None:
        item = {
            schema.PARTITION_KEY: "UNMATCHED",
            schema.SORT_KEY: f"{bucket}/{key}",
            "kind": "unmatched",
            "bucket": bucket,
            "key": key,
            "event_id": event_id,
            "at": at.isoformat(),
        }
        self._client.put_item(TableName=self._table, Item=_to_ddb(item))

    def unmatched_objects(self) -> list[tuple[str, str]]:
        items = self._query(
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues=_to_ddb({":pk": "UNMATCHED"}),
        )
        return [(str(i["bucket"]), str(i["key"])) for i in items]

    # -- budgets (a small partition: Query pk=BUDGETS) ----------------------------
    def stored_budgets(self) -> dict[str, Budget | None]:
        items = self._query(
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues=_to_ddb({":pk": "BUDGETS"}),
        )
        return {
            str(i["sk"]): None if i.get("deleted") else Budget.model_validate_json(i["budget"])
            for i in items
        }

    def put_budget(self, budget: Budget) -> None:
        item = {
            schema.PARTITION_KEY: "BUDGETS",
            schema.SORT_KEY: budget.budget_id,
            "kind": "budget",
            "budget": budget.model_dump_json(),
        }
        self._client.put_item(TableName=self._table, Item=_to_ddb(item))

    def delete_budget(self, budget_id: str) -> None:
        item = {
            schema.PARTITION_KEY: "BUDGETS",
            schema.SORT_KEY: budget_id,
            "kind": "budget",
            "deleted": True,
        }
        self._client.put_item(TableName=self._table, Item=_to_ddb(item))

    # -- budget history (pk=BUDGETS_HISTORY#<id>, sk=<iso time>#<n>; Query by budget) ------
    def put_budget_change(
        self, budget_id: str, after: Budget | None, change: dict[str, Any]
    ) -> None:
        budget: dict[str, Any] = {
            schema.PARTITION_KEY: "BUDGETS",
            schema.SORT_KEY: budget_id,
            "kind": "budget",
        }
        if after is None:
            budget["deleted"] = True
        else:
            budget["budget"] = after.model_dump_json()
        history = {
            schema.PARTITION_KEY: f"BUDGETS_HISTORY#{budget_id}",
            # <n>: a tie-breaker that keeps changes made in the same instant in order.
            schema.SORT_KEY: f"{change['at']}#{time.time_ns():020d}",
            "kind": "budget_change",
            "change": json.dumps(change),
        }
        self._client.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": self._table, "Item": _to_ddb(budget)}},
                {
                    "Put": {
                        "TableName": self._table,
                        "Item": _to_ddb(history),
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
            ]
        )

    def budget_history(self, budget_id: str) -> list[dict[str, Any]]:
        items = self._query(
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues=_to_ddb({":pk": f"BUDGETS_HISTORY#{budget_id}"}),
        )
        return [json.loads(i["change"]) for i in sorted(items, key=lambda i: str(i["sk"]))]

    # -- daily summaries and reconciliations (GetItem / BatchGetItem by date) ----------
    def put_summary(self, day: date, summary: dict[str, Any]) -> None:
        self._put_dated("SUMMARY", day, summary)

    def get_summaries(self, days: Sequence[date]) -> dict[date, dict[str, Any]]:
        return self._get_dated("SUMMARY", days)

    def put_reconciliation(self, day: date, result: dict[str, Any]) -> None:
        self._put_dated("RECONCILIATION", day, result)

    def get_reconciliations(self, days: Sequence[date]) -> dict[date, dict[str, Any]]:
        return self._get_dated("RECONCILIATION", days)

    def _put_dated(self, kind: str, day: date, document: dict[str, Any]) -> None:
        item = {
            schema.PARTITION_KEY: f"{kind}#{day.isoformat()}",
            schema.SORT_KEY: kind,
            "kind": kind.lower(),
            "document": json.dumps(document),
        }
        self._client.put_item(TableName=self._table, Item=_to_ddb(item))

    def _get_dated(self, kind: str, days: Sequence[date]) -> dict[date, dict[str, Any]]:
        found: dict[date, dict[str, Any]] = {}
        keys = [
            {schema.PARTITION_KEY: f"{kind}#{d.isoformat()}", schema.SORT_KEY: kind} for d in days
        ]
        for start in range(0, len(keys), 100):
            request = {self._table: {"Keys": [_to_ddb(k) for k in keys[start : start + 100]]}}
            while request:
                response = self._client.batch_get_item(RequestItems=request)
                for raw in response.get("Responses", {}).get(self._table, []):
                    item = _from_ddb(raw)
                    day = date.fromisoformat(str(item["pk"]).removeprefix(f"{kind}#"))
                    found[day] = json.loads(item["document"])
                request = response.get("UnprocessedKeys") or {}
        return found


def checkpoint_key(bucket: str, key: str) -> dict[str, str]:
    return {schema.PARTITION_KEY: f"CKPT#{bucket}/{key}", schema.SORT_KEY: "OBJECT"}


def _checkpoint_of(item: dict[str, Any]) -> CheckpointObject:
    obj = CheckpointObject.model_validate_json(item["record"])
    return obj.model_copy(update={"version": int(item["version"])})
