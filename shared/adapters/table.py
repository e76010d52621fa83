"""The ledger table behind one small interface, with a DynamoDB and an in-memory version.

Stores (one per kind of record) build operations; a unit of work hands them to
``Table.transact`` so an event's writes land together or not at all. Conditions
are the few the ledger needs: an item absent, a version equal, a value below
(for "raise to at least") or above (for "lower to at most").
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
from operator import itemgetter
from typing import Any, Protocol

from shared.adapters.item_updates import apply_changes, touched_names, updated
from shared.adapters.items import MAX_ITEM_BYTES, ItemTooLarge, SizedItem, copy_item

Item = dict[str, Any]
Key = tuple[str, str]


@dataclass(frozen=True)
class Absent:
    """The item does not exist."""


@dataclass(frozen=True)
class VersionIs:
    value: int


@dataclass(frozen=True)
class Below:
    """``name`` is absent or below ``value`` (so setting it raises it)."""

    name: str
    value: Any


@dataclass(frozen=True)
class Above:
    """``name`` is absent or above ``value`` (so setting it lowers it)."""

    name: str
    value: Any


Condition = Absent | VersionIs | Below | Above


@dataclass
class Put:
    item: Item
    conditions: Sequence[Condition] = ()

    @property
    def key(self) -> Key:
        return (self.item["pk"], self.item["sk"])


@dataclass
class Update:
    pk: str
    sk: str
    add: dict[str, Any] = field(default_factory=dict)  # numbers, or sets of strings
    set: dict[str, Any] = field(default_factory=dict)
    set_if_absent: dict[str, Any] = field(default_factory=dict)
    remove: Sequence[str] = ()
    conditions: Sequence[Condition] = ()

    @property
    def key(self) -> Key:
        return (self.pk, self.sk)


Operation = Put | Update


class ConditionFailed(Exception):
    """One operation's condition did not hold; nothing of the transaction was written."""

    def __init__(self, key: Key) -> None:
        super().__init__(f"condition failed on {key}")
        self.key = key


class Table(Protocol):
    def get(self, pk: str, sk: str) -> Item | None: ...

    def transact(self, operations: Sequence[Operation]) -> None: ...

    def query(
        self,
        pk: str,
        *,
        begins_with: str | None = None,
        sk_from: str | None = None,
        sk_to: str | None = None,
        index: str | None = None,
        descending: bool = False,
        limit: int | None = None,
        attributes: Sequence[str] = (),  # only these (DynamoDB's ProjectionExpression)
        # Only items without this attribute or with it at or above this value (a
        # FilterExpression: DynamoDB reads the others but never sends them).
        keep_from: tuple[str, str] | None = None,
    ) -> Iterator[Item]: ...

    def batch_get(self, keys: Sequence[Key]) -> list[Item]: ...


# -- in memory -------------------------------------------------------------------------


def _holds(condition: Condition, item: Item | None) -> bool:
    if isinstance(condition, Absent):
        return item is None
    if isinstance(condition, VersionIs):
        return item is not None and item.get("version") == condition.value
    if isinstance(condition, Below):
        return item is None or condition.name not in item or item[condition.name] < condition.value
    return item is None or condition.name not in item or item[condition.name] > condition.value


def apply_update(current: Item | None, op: Update, mutable: Sequence[str] | None = None) -> Item:
    """``current`` after ``op``, ``current`` untouched (``mutable``: as ``copy_item`` takes)."""
    item: Item = copy_item(current, mutable) if current is not None else {"pk": op.pk, "sk": op.sk}
    apply_changes(item, op)
    return item


class MemoryTable:
    """``Table`` in a dict, with the same conditions and index rules (the twin): its
    indexes are the table's GSIs (``ledger_schema.INDEXES``: an item is in an index when
    it has both of the index's key attributes, as in a sparse GSI).

    Each partition (of the table and of every index) keeps its items' keys sorted by
    sort key (a string, as the schema declares), so a Query reads its range only, as
    DynamoDB does: local mode keeps its ledger here, and a week of a fleet is hundreds of
    thousands of items (equal index sort keys: in table key order). Stored items are
    replaced, never changed in place (versions may share values: none changes), and
    reads copy their sets, maps and lists: no caller ever holds a stored value. Beside
    each item its size (``SizedItem``): an update counts the attributes it touches."""

    def __init__(self) -> None:
        from shared.adapters.ledger_schema import INDEX_KEYS

        self.items: dict[Key, Item] = {}
        self.indexes = dict(INDEX_KEYS)
        self._index_key_names = {n for pair in INDEX_KEYS.values() for n in pair}
        self._key_names = {"pk", "sk", *self._index_key_names}
        self.calls: dict[str, int] = {}
        # (index or None, partition key value) -> (sort key value, key) of its items, sorted
        self._partitions: dict[tuple[str | None, Any], list[tuple[Any, Key]]] = {}
        self._sized: dict[Key, SizedItem] = {}  # key -> its item, with size and what to copy

    def _count(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1

    def _memberships(self, item: Item) -> set[tuple[str | None, Any, Any]]:
        """(index or None, partition key value, sort key value) of each partition."""
        found: set[tuple[str | None, Any, Any]] = {(None, item["pk"], item["sk"])}
        if self._index_key_names.isdisjoint(item):  # most items are in no index
            return found
        for index, (pk_name, sk_name) in self.indexes.items():
            if pk_name in item and sk_name in item:
                found.add((index, item[pk_name], item[sk_name]))
        return found

    def _store(self, key: Key, sized: SizedItem, keys_kept: bool) -> None:
        """``keys_kept``: its key attributes (so its partitions) are the stored version's."""
        if not keys_kept:
            old = self.items.get(key)
            now = self._memberships(sized.item)
            if old is not None:
                was = self._memberships(old)
                for index, pk, sort in was - now:
                    entries = self._partitions[(index, pk)]
                    del entries[bisect_left(entries, (sort, key))]
                now -= was
            for index, pk, sort in now:
                insort(self._partitions.setdefault((index, pk), []), (sort, key))
        self.items[key] = sized.item
        self._sized[key] = sized

    def _written(self, key: Key, op: Operation) -> tuple[Key, SizedItem, bool]:
        """The item ``op`` writes, and whether its key attributes are the stored ones'."""
        if isinstance(op, Put):
            return key, SizedItem.copied(op.item), False
        stored = self._sized.get(key)
        if stored is None:
            return key, SizedItem.counted(apply_update(None, op)), False
        touched = touched_names(op)
        return key, updated(stored, op, touched), self._key_names.isdisjoint(touched)

    def get(self, pk: str, sk: str) -> Item | None:
        self._count("get")
        return self._sized[(pk, sk)].copy() if (pk, sk) in self._sized else None

    def transact(self, operations: Sequence[Operation]) -> None:
        self._count("transact")
        keys = [op.key for op in operations]
        if len(set(keys)) != len(keys):
            raise ValueError("a transaction may touch an item once")
        for key, op in zip(keys, operations, strict=True):
            if op.conditions:
                current = self.items.get(key)
                for condition in op.conditions:
                    if not _holds(condition, current):
                        raise ConditionFailed(key)
        written = [self._written(key, op) for key, op in zip(keys, operations, strict=True)]
        for key, sized, keys_kept in written:
            if sized.size > MAX_ITEM_BYTES:
                raise ItemTooLarge(key)
            key_names = () if keys_kept else self._key_names.intersection(sized.item)
            if any(not isinstance(sized.item[n], str) for n in key_names):  # all S (schema)
                raise ValueError(f"item {key}: a key attribute that is not a string")
        for key, sized, keys_kept in written:
            self._store(key, sized, keys_kept)

    def query(
        self,
        pk: str,
        *,
        begins_with: str | None = None,
        sk_from: str | None = None,
        sk_to: str | None = None,
        index: str | None = None,
        descending: bool = False,
        limit: int | None = None,
        attributes: Sequence[str] = (),
        keep_from: tuple[str, str] | None = None,
    ) -> Iterator[Item]:
        self._count("query")
        entries = self._partitions.get((index, pk), [])
        lo, hi = 0, len(entries)
        if sk_from is not None:
            lo = bisect_left(entries, sk_from, key=itemgetter(0))
        if sk_to is not None:
            hi = bisect_right(entries, sk_to, key=itemgetter(0))
        if begins_with is not None:  # the keys that begin so are together, from the prefix
            lo = max(lo, bisect_left(entries, begins_with, key=itemgetter(0)))
            hi = next((n for n in range(lo, hi) if not entries[n][0].startswith(begins_with)), hi)
        in_range = reversed(entries[lo:hi]) if descending else entries[lo:hi]
        in_order = (self._sized[key] for _, key in in_range)  # the items as they are now
        if keep_from is not None:  # as DynamoTable pages: a limit counts kept items
            name, least = keep_from
            in_order = (s for s in in_order if str(s.item.get(name, least)) >= least)
        found = list(islice(in_order, limit or None))
        if attributes:
            wanted = frozenset(attributes)
            yield from (stored.projected(wanted) for stored in found)
        else:
            yield from map(SizedItem.copy, found)

    def batch_get(self, keys: Sequence[Key]) -> list[Item]:
        self._count("batch_get")
        return [self._sized[k].copy() for k in keys if k in self._sized]


# -- DynamoDB ----------------------------------------------------------------------------


class DynamoTable:
    """``Table`` over one DynamoDB table (low-level client, so boto3's resource layer
    is never imported)."""

    def __init__(self, client: Any, table_name: str) -> None:
        from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

        from shared.adapters.ledger_schema import INDEX_KEYS
        from shared.adapters.table_requests import write_request

        self._client = client
        self._table = table_name
        self._indexes = dict(INDEX_KEYS)
        self._ser = TypeSerializer()
        self._de = TypeDeserializer()
        self._request = partial(write_request, table_name, self._to)

    def _to(self, item: Mapping[str, Any]) -> dict[str, Any]:
        return {k: self._ser.serialize(v) for k, v in item.items()}

    def _from(self, item: Mapping[str, Any]) -> Item:
        return {k: self._de.deserialize(v) for k, v in item.items()}

    def get(self, pk: str, sk: str) -> Item | None:
        response = self._client.get_item(
            TableName=self._table, Key=self._to({"pk": pk, "sk": sk}), ConsistentRead=True
        )
        return self._from(response["Item"]) if "Item" in response else None

    def transact(self, operations: Sequence[Operation]) -> None:
        if not operations:
            return
        keys = [op.key for op in operations]
        if len(set(keys)) != len(keys):  # as MemoryTable says it (DynamoDB: ValidationException)
            raise ValueError("a transaction may touch an item once")
        client = self._client
        try:
            if len(operations) == 1:
                op = operations[0]
                write = client.put_item if isinstance(op, Put) else client.update_item
                write(**self._request(op))
                return
            client.transact_write_items(
                TransactItems=[
                    {("Put" if isinstance(op, Put) else "Update"): self._request(op)}
                    for op in operations
                ]
            )
        except client.exceptions.ConditionalCheckFailedException as exc:
            raise ConditionFailed(operations[0].key) from exc
        except client.exceptions.TransactionCanceledException as exc:
            reasons = exc.response.get("CancellationReasons", [])
            for op, reason in zip(operations, reasons, strict=False):
                if reason.get("Code") == "ConditionalCheckFailed":
                    raise ConditionFailed(op.key) from exc
            raise
        except client.exceptions.ClientError as exc:
            if "maximum allowed size" in str(exc):  # ValidationException: the item limit
                raise ItemTooLarge(operations[0].key) from exc
            raise

    def query(
        self,
        pk: str,
        *,
        begins_with: str | None = None,
        sk_from: str | None = None,
        sk_to: str | None = None,
        index: str | None = None,
        descending: bool = False,
        limit: int | None = None,
        attributes: Sequence[str] = (),
        keep_from: tuple[str, str] | None = None,
    ) -> Iterator[Item]:
        pk_name, sk_name = self._indexes[index] if index else ("pk", "sk")
        names = {"#pk": pk_name, "#sk": sk_name}
        values: dict[str, Any] = {":pk": pk}
        condition = "#pk = :pk"
        if begins_with is not None:
            condition += " AND begins_with(#sk, :pre)"
            values[":pre"] = begins_with
        elif sk_from is not None and sk_to is not None:
            condition += " AND #sk BETWEEN :lo AND :hi"
            values[":lo"], values[":hi"] = sk_from, sk_to
        elif sk_from is not None:
            condition += " AND #sk >= :lo"
            values[":lo"] = sk_from
        elif sk_to is not None:
            condition += " AND #sk <= :hi"
            values[":hi"] = sk_to
        else:
            del names["#sk"]
        kwargs: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": condition,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": self._to(values),
            "ScanIndexForward": not descending,
        }
        if index:
            kwargs["IndexName"] = index
        if attributes:
            names |= {f"#a{n}": a for n, a in enumerate(attributes)}
            kwargs["ProjectionExpression"] = ", ".join(f"#a{n}" for n in range(len(attributes)))
        if keep_from is not None:
            names["#keep"] = keep_from[0]
            kwargs["FilterExpression"] = "attribute_not_exists(#keep) OR #keep >= :keep"
            kwargs["ExpressionAttributeValues"] |= self._to({":keep": keep_from[1]})
        returned = 0
        while True:
            if limit:
                kwargs["Limit"] = limit - returned
            page = self._client.query(**kwargs)
            for raw in page.get("Items", []):
                yield self._from(raw)
                returned += 1
            if (limit and returned >= limit) or "LastEvaluatedKey" not in page:
                return
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def batch_get(self, keys: Sequence[Key]) -> list[Item]:
        found: list[Item] = []
        for start in range(0, len(keys), 100):
            request: dict[str, Any] = {
                self._table: {
                    "Keys": [self._to({"pk": pk, "sk": sk}) for pk, sk in keys[start : start + 100]]
                }
            }
            while request:
                response = self._client.batch_get_item(RequestItems=request)
                found += [self._from(i) for i in response.get("Responses", {}).get(self._table, [])]
                request = response.get("UnprocessedKeys") or {}
        return found
