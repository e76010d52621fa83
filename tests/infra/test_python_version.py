"""One Python version for the functions: Lambda's runtime, the layer's wheels (bundling),
ruff's and mypy's target, and the lowest version the package allows (issue 29)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from bench.bundle import PIP_TARGET_ARGS as BENCH_PIP_TARGET_ARGS
from cdk.constructs.lambda_factory import PIP_TARGET_ARGS, RUNTIME, RUNTIME_VERSION

ROOT = Path(__file__).resolve().parents[2]


def _pip_python_version(args: tuple[str, ...]) -> str:
    return args[args.index("--python-version") + 1]


def test_runtime_bundling_ruff_mypy_and_requires_python_name_one_version() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert RUNTIME.name == f"python{RUNTIME_VERSION}"
    assert _pip_python_version(PIP_TARGET_ARGS) == RUNTIME_VERSION
    assert _pip_python_version(BENCH_PIP_TARGET_ARGS) == RUNTIME_VERSION
    assert project["tool"]["ruff"]["target-version"] == "py" + RUNTIME_VERSION.replace(".", "")
    assert project["tool"]["mypy"]["python_version"] == RUNTIME_VERSION
    assert project["project"]["requires-python"] == f">={RUNTIME_VERSION}"
