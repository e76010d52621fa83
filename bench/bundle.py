"""Section 4: zipped size of every Lambda asset: each function's code and the layer,
the layer built as ``cdk/constructs/lambda_factory.py`` builds it (pip for arm64/cp312)."""

from __future__ import annotations

import io
import tempfile
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# Kept equal to lambda_factory.PIP_TARGET_ARGS (not imported: that module needs aws_cdk).
PIP_TARGET_ARGS = (
    "--platform",
    "manylinux2014_aarch64",
    "--only-binary=:all:",
    "--python-version",
    "3.11",
    "--implementation",
    "cp",
)


def _files(root: Path, bytecode: bool = False) -> list[Path]:
    return [
        p
        for p in sorted(root.rglob("*"))
        if p.is_file() and (bytecode or ("__pycache__" not in p.parts and p.suffix != ".pyc"))
    ]


def zipped(root: Path, bytecode: bool = False) -> tuple[int, int, int]:
    """(zipped bytes, unzipped bytes, files) of ``root`` zipped with deflate; the layer's
    own compiled bytecode counts (a developer's __pycache__ in function folders does not)."""
    buffer = io.BytesIO()
    files = _files(root, bytecode)
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in files:
            archive.write(path, path.relative_to(root).as_posix())
    return len(buffer.getvalue()), sum(p.stat().st_size for p in files), len(files)


def pip_target_args_match() -> bool | None:
    text = (ROOT / "cdk" / "constructs" / "lambda_factory.py").read_text()
    return all(f'"{arg}"' in text for arg in PIP_TARGET_ARGS)


def functions() -> dict[str, dict[str, int]]:
    out = {}
    for d in sorted((ROOT / "functions").iterdir()):
        if (d / "handler.py").is_file():
            z, u, n = zipped(d)
            out[d.name] = {"zipped_bytes": z, "unzipped_bytes": u, "files": n}
    return out


def layer() -> dict[str, Any]:
    from cdk.constructs.lambda_factory import PipLayerBundling

    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "python"
        PipLayerBundling().try_bundle(tmp)  # exactly as `cdk synth` builds it
        compiled = any(target.rglob("*.cpython-312.pyc"))
        z, u, n = zipped(Path(tmp), bytecode=True)
        largest = sorted(
            (
                (
                    sum(p.stat().st_size for p in _files(d)) if d.is_dir() else d.stat().st_size,
                    d.name,
                )
                for d in target.iterdir()
            ),
            reverse=True,
        )[:4]
    return {
        "bytecode_for_runtime": compiled,
        "zipped_bytes": z,
        "unzipped_bytes": u,
        "files": n,
        "largest_unzipped": [{"name": name, "bytes": size} for size, name in largest],
    }
