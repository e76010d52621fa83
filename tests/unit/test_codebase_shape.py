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
