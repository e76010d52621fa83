"""The demo's scenario ships inside the package (issue 29): ``costtracker demo`` works from
an installed package, not only from a checkout (it once read ``../examples``)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import costtracker
from costtracker.demo import EXAMPLE

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(costtracker.__file__).resolve().parent


def _package_data_globs() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    globs: list[str] = project["tool"]["setuptools"]["package-data"]["costtracker"]
    return globs


def test_the_demo_scenario_is_inside_the_package() -> None:
    assert EXAMPLE.is_file()
    assert PACKAGE in EXAMPLE.resolve().parents


def test_every_shipped_example_is_package_data() -> None:
    examples = sorted((PACKAGE / "examples").glob("*"))
    assert EXAMPLE in examples
    for path in examples:
        relative = path.relative_to(PACKAGE)
        assert any(relative.match(glob) for glob in _package_data_globs()), relative
