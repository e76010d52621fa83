"""Queries on the embedded emulator at a cost that does not grow with the whole table.

moto answers every Query, on the table or on an index, by listing *all* the table's
items sorted by key (``Table.all_items`` sorts with Python-level comparisons) and then
filtering them. A replay's hourly sweeps and its reads of one job's partition therefore
slowed down as the ledger grew (170 ms a Query at 30,000 items). The results of a Query do
not depend on that first sort: moto sorts what matched afterwards (by the index's keys
then the table's keys, or by range key within one partition). So, for the duration of a
Query only, ``all_items`` hands moto the candidates unsorted: for the table, just the
asked partition; for an index, the items whose hash key attribute holds the asked value
(DynamoDB indexes no other item, and moto skips the others anyway). A Query of the table
with a sort key condition gets only the partition's items that meet it, by moto's own
comparison: moto would otherwise size every item of the partition (``Item.size``) before
testing it, so reading one day of a job cost as much as reading its whole history.
Results, order and paging stay moto's own; Scans, which page through ``all_items`` in
key order, are untouched.

Two copies moto makes of what a Query found are skipped, because nothing changes what
they copy before the answer is written: the deep copy of every matching item (the
items are only read, then projected into new items or written out), and, for a
projection of top-level names (``ProjectionExpression``, an index's ``KEYS_ONLY`` or
``INCLUDE``), the round trip of the whole item through plain Python values that moto
uses to pick a few attributes (a 10 KB instance head cost 0.5 ms to project to its
key and version). A projection the fast path does not read (nested paths, list
elements) is moto's own.
"""

from __future__ import annotations

import copy
import threading
from typing import Any

_local = threading.local()


class _CopyOfQueries:
    """``copy`` as moto's table module sees it: during a Query (flag set by the Query
    wrapper) the list of matching items is copied shallowly; anything else as ``copy``."""

    def __getattr__(self, name: str) -> Any:
        return getattr(copy, name)

    @staticmethod
    def deepcopy(value: Any, memo: Any = None) -> Any:
        if getattr(_local, "shallow", False) and type(value) is list:
            return list(value)
        return copy.deepcopy(value, memo)


def _top_level(projection_expressions: list[list[str]]) -> list[str] | None:
    """The attribute names of a projection of top-level names only, else None."""
    names = []
    for path in projection_expressions:
        if len(path) != 1 or "[" in path[0]:
            return None
        names.append(path[0])
    return names


def patch_moto_queries() -> None:
    """Install the Query fast path once per process (idempotent)."""
    from moto.dynamodb.comparisons import get_comparison_func
    from moto.dynamodb.models import table as table_module
    from moto.dynamodb.models.dynamo_type import Item
    from moto.dynamodb.models.table import Table

    if getattr(Table, "_costtracker_queries", False):
        return
    sorted_all_items = Table.all_items
    original_query = Table.query
    original_project = Item.project

    def all_items(self: Any) -> Any:
        override = getattr(_local, "candidates", None)
        if override is not None and override[0] is self:
            return override[1]
        return sorted_all_items(self)

    def candidates(self: Any, hash_key: Any, index_name: str | None) -> list[Any]:
        if not self.range_key_attr:
            return list(self.items.values())
        if index_name:
            index = next((i for i in self.all_indexes() if i.name == index_name), None)
            if index is None:  # moto names the error
                return []
            hash_attr = next(k["AttributeName"] for k in index.schema if k["KeyType"] == "HASH")
            if hash_key is None:
                return [
                    item
                    for bucket in self.items.values()
                    for item in bucket.values()
                    if hash_attr in item.attrs
                ]
            return [
                item
                for bucket in self.items.values()
                for item in bucket.values()
                if (value := item.attrs.get(hash_attr)) is not None and value == hash_key
            ]
        if hash_key is None:
            return [item for bucket in self.items.values() for item in bucket.values()]
        bucket = self.items.get(hash_key)
        return list(bucket.values()) if bucket else []

    def in_range(items: list[Any], comparison: str | None, objects: Any) -> list[Any]:
        """The items whose sort key meets the Query's condition, tested as moto tests it."""
        compare = get_comparison_func(comparison) if comparison else None
        if compare is None or not objects:
            return items
        bounds = [o.cast_value for o in objects]
        return [
            i for i in items if i.range_key is not None and compare(i.range_key.cast_value, *bounds)
        ]

    def query(self: Any, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
        index_name = kwargs.get("index_name")
        if index_name is None and len(args) > 6:
            index_name = args[6]
        found = candidates(self, hash_key, index_name)
        if not index_name and self.range_key_attr:
            comparison = args[0] if args else kwargs.get("range_comparison")
            objects = args[1] if len(args) > 1 else kwargs.get("range_objs")
            found = in_range(found, comparison, objects)
        _local.candidates = (self, found)
        _local.shallow = True
        try:
            return original_query(self, hash_key, *args, **kwargs)
        finally:
            _local.candidates = None
            _local.shallow = False

    def project(self: Any, projection_expressions: list[list[str]]) -> Any:
        names = _top_level(projection_expressions)
        if names is None:
            return original_project(self, projection_expressions)
        projected = Item(hash_key=self.hash_key, range_key=self.range_key, attrs={})
        for name in names:
            if name in self.attrs:  # values are shared: a projection is only written out
                dict.__setitem__(projected.attrs, name, self.attrs[name])
        return projected

    query.__wrapped__ = original_query  # type: ignore[attr-defined]
    project.__wrapped__ = original_project  # type: ignore[attr-defined]
    Table.all_items = all_items  # type: ignore[method-assign]
    Table.query = query  # type: ignore[method-assign]
    Item.project = project  # type: ignore[method-assign]
    table_module.copy = _CopyOfQueries()  # type: ignore[attr-defined,assignment]
    Table._costtracker_queries = True  # type: ignore[attr-defined]
