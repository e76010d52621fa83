"""The codebase keeps the shape its README describes: small modules, handlers that only
wire, typed dependency set-up. These are limits on the code itself, not on behaviour."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("shared", "functions", "costtracker", "cdk", "bench")
MODULE_LIMIT = 400
HANDLER_LIMIT = 60


def _modules() -> list[Path]:
    return sorted(
        p for package in PACKAGES for p in (ROOT / package).rglob("*.py") if ".venv" not in p.parts
    )


def test_no_module_is_over_400_lines() -> None:
    long = {
        str(p.relative_to(ROOT)): n
        for p in _modules()
        if (n := len(p.read_text().splitlines())) > MODULE_LIMIT
    }
    assert long == {}


@pytest.mark.parametrize(
    "handler", sorted((ROOT / "functions").glob("*/handler.py")), ids=lambda p: p.parent.name
)
def test_handlers_only_wire(handler: Path) -> None:
    assert len(handler.read_text().splitlines()) <= HANDLER_LIMIT


# The dependency set-up: the runtime that builds every function's dependencies, the
# per-function settings, the decorator, and the dependency set the services take.
DEPENDENCY_SET_UP = (
    "shared/app/runtime.py",
    "shared/app/function_settings.py",
    "shared/app/event_function.py",
    "shared/services/deps.py",
)


def test_no_any_in_the_dependency_set_up() -> None:
    found = []
    for path in (ROOT / p for p in DEPENDENCY_SET_UP):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id == "Any":
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
            if isinstance(node, ast.Attribute) and node.attr == "Any":
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []


def test_shared_is_laid_out_by_kind() -> None:
    """Every module of ``shared`` sits in one of the layout's packages (README
    "Architecture"): nothing flat beside them."""
    flat = sorted(p.name for p in (ROOT / "shared").glob("*.py") if p.name != "__init__.py")
    packages = sorted(
        p.name for p in (ROOT / "shared").iterdir() if p.is_dir() and (p / "__init__.py").exists()
    )
    assert flat == []
    assert packages == [
        "adapters",
        "api",
        "app",
        "config",
        "domain",
        "events",
        "reports",
        "services",
    ]


# Test files named after no single module: checks of the codebase itself (``codebase_``)
# and product-wide rules through many modules at once (``spec_``); infra tests are
# ``test_infra_<concern>`` (docs/testing.md, "Finding a module's tests").
NAMED_BY_CONCERN = ("codebase_", "spec_")


def _module_names() -> set[str]:
    names = {p.stem for p in _modules() if p.stem != "__init__"}
    names |= {p.parent.name for p in _modules() if p.name == "__init__.py"}
    return names | {p.parent.name for p in (ROOT / "functions").glob("*/handler.py")}


@pytest.mark.parametrize("tier", ["unit", "integration"])
def test_a_test_file_is_named_after_its_module(tier: str) -> None:
    """``tests/<tier>/test_<module>.py`` or ``test_<module>_<aspect>.py``: a module's tests
    are found from its name (``ls tests/*/test_<module>*``)."""
    modules = _module_names()
    unnamed = [
        p.name
        for p in sorted((ROOT / "tests" / tier).glob("test_*.py"))
        if not p.stem.removeprefix("test_").startswith(NAMED_BY_CONCERN)
        and not any(p.stem == f"test_{m}" or p.stem.startswith(f"test_{m}_") for m in modules)
    ]
    assert unnamed == []


# EventBridge events are built by one builder (``costtracker/fakes/scenario_events.py``,
# which ``tests/aws_events.py`` re-exports): no scenario generator, test, bench or local
# module writes its own event literal. The fuzz test draws hostile envelopes on purpose.
EVENT_BUILDER = "costtracker/fakes/scenario_events.py"
OWN_ENVELOPES = (EVENT_BUILDER, "tests/fuzz/test_event_parsing_fuzz.py")
EVENT_WRITERS = ("tests", "examples", "bench", "costtracker")


def event_literals(source: str) -> list[int]:
    """Lines of dict literals keyed ``"detail-type"`` by one value: events (an EventBridge
    rule's pattern matches a list of them)."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Dict)
        and any(
            isinstance(k, ast.Constant)
            and k.value == "detail-type"
            and not isinstance(v, ast.List | ast.ListComp)
            for k, v in zip(node.keys, node.values, strict=True)
        )
    ]


def test_event_literals_are_recognised() -> None:
    event = 'e = {"version": "0", "detail-type": kind, "detail": {}}'
    pattern = 'p = {"source": ["aws.s3"], "detail-type": ["Object Created"]}'
    assert event_literals(event) == [1]
    assert event_literals(pattern) == []


def test_events_come_from_the_one_builder() -> None:
    copies = []
    for path in sorted(p for d in EVENT_WRITERS for p in (ROOT / d).rglob("*.py")):
        where = str(path.relative_to(ROOT))
        if where not in OWN_ENVELOPES and ".venv" not in path.parts:
            copies += [f"{where}:{line}" for line in event_literals(path.read_text())]
    assert copies == []
    assert event_literals((ROOT / EVENT_BUILDER).read_text()) != []


def test_the_runtimes_stores_are_named_by_one_rule() -> None:
    """A part of the runtime that is a store is named ``<record>_store`` (docs/architecture.md)."""
    tree = ast.parse((ROOT / "shared/app/runtime.py").read_text())
    runtime = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Runtime")
    parts = {
        node.name: ast.unparse(node.returns)
        for node in runtime.body
        if isinstance(node, ast.FunctionDef) and node.returns is not None
    }
    stores = {name: kind for name, kind in parts.items() if kind.endswith("Store")}
    assert len(stores) >= 10
    assert [name for name in stores if not name.endswith("_store")] == []
