"""One pyarrow everywhere (docs/parquet.md): the package's dependency, the development
lock, the functions' pyarrow layer and the pyarrow the tests run with are one version, and
the layer is built for the runtime's platform tag and rebuilt only when its own inputs
change."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pyarrow
import pytest

from cdk.constructs import lambda_factory
from cdk.constructs.lambda_factory import (
    PIP_TARGET_ARGS,
    PYARROW_REQUIREMENTS,
    PYARROW_UNUSED,
    PipLayerBundling,
    pyarrow_bundling,
)

ROOT = Path(__file__).resolve().parents[2]


def _pins(text: str) -> list[str]:
    return re.findall(r"^\s*\"?pyarrow==([^\s\",]+)", text, re.M)


def test_the_package_the_lock_the_layer_and_the_tests_have_one_pyarrow() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (declared,) = [d.split("==")[1] for d in project["dependencies"] if d.startswith("pyarrow")]
    assert not [
        d for extra in project["optional-dependencies"].values() for d in extra if "pyarrow" in d
    ]
    requirements = ROOT / "requirements"
    assert _pins((requirements / "dev.lock").read_text()) == [declared]
    assert _pins((requirements / "lambda-pyarrow.in").read_text()) == [declared]
    assert _pins(PYARROW_REQUIREMENTS.read_text()) == [declared]
    assert "pyarrow" not in (requirements / "lambda.txt").read_text()  # not in every function
    assert pyarrow.__version__ == declared


def test_the_pyarrow_layer_is_built_from_its_own_pins_for_the_runtime() -> None:
    bundling = pyarrow_bundling()
    assert bundling.requirements == PYARROW_REQUIREMENTS
    assert not bundling.with_shared
    assert bundling.unused == PYARROW_UNUSED
    assert "manylinux2014_aarch64" in PIP_TARGET_ARGS  # glibc 2.17: Amazon Linux 2 runs it


def test_the_pyarrow_layer_is_not_rebuilt_when_shared_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = (PipLayerBundling().asset_hash(), pyarrow_bundling().asset_hash())
    (tmp_path / "module.py").write_text("x = 1\n")
    monkeypatch.setattr(lambda_factory, "SHARED_DIR", tmp_path)
    monkeypatch.setattr(lambda_factory, "REPO_ROOT", tmp_path.parent)
    after = (PipLayerBundling().asset_hash(), pyarrow_bundling().asset_hash())
    assert after[0] != before[0]
    assert after[1] == before[1]
