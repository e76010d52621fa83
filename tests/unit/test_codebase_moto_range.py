"""moto is pinned (the lock) inside a declared range (pyproject's ``local`` extra), and CI
runs the golden replays on the range's lowest version too (``.ci/run``, issue 29)."""

from __future__ import annotations

import importlib.util
from importlib.metadata import version
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("moto_range", ROOT / ".ci" / "moto_range.py")
assert _spec is not None and _spec.loader is not None
moto_range = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(moto_range)


def test_the_pin_and_the_lowest_are_inside_the_declared_range() -> None:
    declared = Requirement(moto_range.declared())
    assert declared.name == "moto"
    assert ">=" in str(declared.specifier) and "<" in str(declared.specifier)
    assert declared.specifier.contains(moto_range.pinned())
    assert declared.specifier.contains(moto_range.lowest())


def test_the_development_environment_runs_the_pin() -> None:
    assert version("moto") == moto_range.pinned()


def test_ci_runs_the_golden_replays_on_the_lowest_moto() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert "moto_range.py lowest" in ci
    assert '"moto[server]==$lowest"' in ci
    assert "tests/integration/test_replay_golden.py" in ci
