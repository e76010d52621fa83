"""The stores are the only code that knows the table's keys, and their warm copies are
their own business: a store stages its writes into the event's unit of work together
with what it keeps once they land and forgets when a condition fails
(``shared.adapters.unit_of_work``). Above the stores nothing keeps a store's copy in
step by hand, reaches into another object's private state, or spells a table key."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import get_args

from shared.adapters import keys
from shared.adapters import ledger_schema as schema
from shared.domain.index_facts import Sweep

ROOT = Path(__file__).resolve().parents[2]
# Everything above the stores: the services, the wiring, the API, the entry points.
ABOVE_THE_STORES = ("shared/services", "shared/app", "shared/api", "functions")
# A store's cache upkeep: remember*, forget* (also when made private).
CACHE_UPKEEP = re.compile(r"^_?(remember|forget)")


def _modules(*folders: str) -> Iterator[Path]:
    for folder in folders:
        yield from sorted((ROOT / folder).rglob("*.py"))


def _where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"


def _key_parts() -> tuple[set[str], set[str]]:
    """(prefixes such as ``JOB#``, whole keys such as ``PTR``) of the key layout
    ``shared.adapters.keys`` documents, and the index partitions and attributes."""
    prefixes: set[str] = set()
    whole = {schema.PARTITION_KEY, schema.SORT_KEY, schema.UNPRICED, schema.ROLLUPS}
    whole |= {schema.PENDING, *get_args(Sweep)}
    whole |= {name for index in schema.INDEXES for name in schema.index_attributes(index)}
    for line in (keys.__doc__ or "").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 3 or cells[1] in ("pk", "---"):
            continue
        for cell in cells[1:3]:  # the pk and sk columns
            fixed = cell.split("<")[0].split(" ")[0]
            if "#" in fixed:
                prefixes.add(fixed[: fixed.rindex("#") + 1])
            elif fixed and "<" not in cell:
                whole.add(fixed)
    return prefixes, whole


def test_the_key_layout_is_read_from_the_stores_own_table() -> None:
    """The check below reads the documented layout; it must find it (or it checks nothing)."""
    prefixes, whole = _key_parts()
    assert {"JOB#", "INST#", "H#I#", "E#", "R#", "RES#", "FSX#"} <= prefixes
    assert {"pk", "sk", "PTR", "HEAD", "ROLLUPS", "OPEN", "gsi_open_pk"} <= whole


def test_nothing_above_the_stores_keeps_their_copies_in_step() -> None:
    """No ``deps.instances.remember(...)`` or ``store.forget(...)``: staging into the unit
    of work says it, once, in the store."""
    wrong = [
        f"{_where(path, node)} .{node.func.attr}(...)"
        for path in _modules(*ABOVE_THE_STORES)
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and CACHE_UPKEEP.match(node.func.attr)
    ]
    assert not wrong, "\n".join(wrong)


def test_stores_keep_their_cache_upkeep_private() -> None:
    """A store offers no public ``remember``/``forget``: the only way in is to stage."""
    wrong = [
        f"{_where(path, node)} {cls.name}.{node.name}"
        for path in _modules("shared/adapters")
        for cls in ast.walk(ast.parse(path.read_text()))
        if isinstance(cls, ast.ClassDef)
        for node in cls.body
        if isinstance(node, ast.FunctionDef)
        and CACHE_UPKEEP.match(node.name)
        and not node.name.startswith("_")
    ]
    assert not wrong, "\n".join(wrong)


def test_nothing_above_the_stores_reaches_into_another_objects_private_state() -> None:
    """``deps.instances._heads`` or ``prices._today`` would tie a caller to how an
    object keeps its state; only the object itself (``self._...``) touches it."""
    wrong = [
        f"{_where(path, node)} {ast.unparse(node)}"
        for path in _modules(*ABOVE_THE_STORES)
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
    ]
    assert not wrong, "\n".join(wrong)


def test_no_service_spells_a_table_key() -> None:
    """No ``"pk"``, ``f"JOB#{job}"``, ``begins_with="R#"`` in a service: it asks a store
    for records, never the table for keys (the grants name the partitions a function may
    write, for IAM, in ``shared.app.function_grants``)."""
    prefixes, whole = _key_parts()
    wrong = [
        f"{_where(path, node)} {node.value!r}"
        for path in _modules("shared/services")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and (node.value in whole or node.value.startswith(tuple(prefixes)))
    ]
    assert not wrong, "\n".join(wrong)
