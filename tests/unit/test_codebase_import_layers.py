"""Which package may import which (docs/architecture.md draws it): configuration at the
bottom; the pure domain; the events' models; stores and adapters; reports; services; the
wiring (runtime, function catalog); the API; then the entry points (functions, the CLI,
CDK, the benchmarks). Every import counts, inside functions and under TYPE_CHECKING too:
a cycle hidden from the interpreter is still a cycle for a reader."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("shared", "functions", "costtracker", "cdk", "bench")

_BELOW_SERVICES = {
    "shared.config",
    "shared.domain",
    "shared.events",
    "shared.adapters",
    "shared.reports",
}
# package -> the packages of ours it may import (besides itself)
ALLOWED: dict[str, set[str]] = {
    "shared": set(),
    "shared.config": set(),
    "shared.domain": {"shared.config"},
    "shared.events": {"shared.config", "shared.domain"},
    "shared.adapters": {"shared.config", "shared.domain"},
    "shared.reports": {"shared.config", "shared.domain"},
    "shared.services": _BELOW_SERVICES,
    "shared.app": _BELOW_SERVICES | {"shared.services"},
    "shared.api": _BELOW_SERVICES | {"shared.services", "shared.app"},
    "functions": _BELOW_SERVICES | {"shared.services", "shared.app", "shared.api"},
    # CDK reads the catalog, the table's schema and the metrics' namespace (adapters).
    "cdk": {"shared.config", "shared.domain", "shared.adapters", "shared.app"},
    "costtracker": _BELOW_SERVICES
    | {"shared.services", "shared.app", "shared.api", "functions", "cdk"},
    "bench": _BELOW_SERVICES
    | {"shared.services", "shared.app", "shared.api", "functions", "costtracker", "cdk"},
}
OURS = ("shared", "functions", "costtracker", "cdk", "bench", "tests")

# Libraries that belong to one layer: AWS clients only in adapters (built through
# ``shared.adapters.accounts``), CDK only in cdk/, moto only in local mode and tests.
LIBRARY_HOMES: dict[str, set[str]] = {
    "boto3": {"shared.adapters", "costtracker", "bench"},
    # the SDK's errors and client type: adapters, and the runtime that keeps the clients
    "botocore": {"shared.adapters", "shared.app", "costtracker", "bench"},
    "aws_cdk": {"cdk"},
    "constructs": {"cdk"},
    "cdk_nag": {"cdk"},
    "moto": {"costtracker", "bench"},
    # Parquet in one module (shared.reports.parquet): the functions that import it are
    # the ones deployed with the pyarrow layer.
    "pyarrow": {"shared.reports", "bench"},
}
# The table's keys and schema: in the product only the stores (in shared.adapters) know
# them; CDK and the local tools create the table from its schema.
KEY_MODULES = ("shared.adapters.keys", "shared.adapters.ledger_schema")
TABLE_CALLS = {"get", "query", "transact", "put", "update", "delete", "batch_get"}


def _modules() -> list[Path]:
    return sorted(p for s in SOURCES for p in (ROOT / s).rglob("*.py"))


def _name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "shared" and len(parts) > 1 else parts[0]


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, module) of every import of the file; ``from a import b`` also yields ``a.b``
    (``b`` may be a module)."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module
            for alias in node.names:
                yield node.lineno, f"{node.module}.{alias.name}"


def _where(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT)}:{line}"


def test_every_package_has_a_rule() -> None:
    assert {_package(_name(p)) for p in _modules()} <= ALLOWED.keys()


def test_packages_import_only_the_layers_below() -> None:
    wrong = []
    for path in _modules():
        own = _package(_name(path))
        for line, imported in _imports(path):
            if imported.split(".")[0] not in OURS:
                continue
            target = _package(imported)
            if target != own and target not in ALLOWED[own]:
                wrong.append(f"{_where(path, line)} {own} imports {imported}")
    assert not wrong, "\n".join(wrong)


def test_the_layers_have_no_cycle() -> None:
    """The rules themselves form no cycle (each package only reaches packages below it)."""

    def reach(package: str, seen: frozenset[str]) -> None:
        assert package not in seen, f"cycle through {package}"
        for below in ALLOWED[package] & ALLOWED.keys():
            reach(below, seen | {package})

    for package in ALLOWED:
        reach(package, frozenset())


@pytest.mark.parametrize("library", sorted(LIBRARY_HOMES))
def test_libraries_stay_in_their_layer(library: str) -> None:
    wrong = [
        f"{_where(path, line)} imports {imported}"
        for path in _modules()
        for line, imported in _imports(path)
        if imported.split(".")[0] == library and _package(_name(path)) not in LIBRARY_HOMES[library]
    ]
    assert not wrong, "\n".join(wrong)


def test_only_stores_know_the_table_keys() -> None:
    wrong = [
        f"{_where(path, line)} imports {imported}"
        for path in _modules()
        if _package(_name(path)).startswith("shared.") or _package(_name(path)) == "functions"
        if _package(_name(path)) != "shared.adapters"
        for line, imported in _imports(path)
        if imported.startswith(KEY_MODULES)
    ]
    assert not wrong, "\n".join(wrong)


def test_only_stores_read_or_write_the_table() -> None:
    """Outside the stores nothing calls the table itself (``deps.table.query(...)``):
    services hand it to a store or a unit of work."""
    wrong = []
    for path in _modules():
        if _package(_name(path)) in ("shared.adapters", "costtracker", "bench"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            owner = node.func.value
            named_table = (isinstance(owner, ast.Attribute) and owner.attr == "table") or (
                isinstance(owner, ast.Name) and owner.id == "table"
            )
            if named_table and node.func.attr in TABLE_CALLS:
                wrong.append(f"{_where(path, node.lineno)} .table.{node.func.attr}(...)")
    assert not wrong, "\n".join(wrong)


def test_routes_are_handed_the_runtime() -> None:
    """The API's routes take the runtime the handler put in the resolver's context
    (``shared.api.caller.runtime_of``), as event functions are handed theirs: no route
    reaches for the module-level accessors of ``shared.app.runtime``."""
    wrong = []
    for path in sorted((ROOT / "shared" / "api").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            names = {alias.name for alias in node.names}
            if (node.module == "shared.app" and "runtime" in names) or (
                node.module == "shared.app.runtime" and names != {"Runtime"}
            ):
                wrong.append(f"{_where(path, node.lineno)} imports {node.module}: {names}")
    assert not wrong, "\n".join(wrong)


def test_services_and_below_ask_for_no_client() -> None:
    """AWS clients are made by the client factory and held by adapters; the wiring (the
    runtime, handlers, routes) hands them over. Nothing from the services down asks for
    one (``.client(...)``, ``.client_for(...)``)."""
    below = ("shared.services", *sorted(_BELOW_SERVICES - {"shared.adapters"}))
    wrong = [
        f"{_where(path, node.lineno)} .{node.func.attr}(...)"
        for path in _modules()
        if _package(_name(path)) in below
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("client", "client_for")
    ]
    assert not wrong, "\n".join(wrong)
