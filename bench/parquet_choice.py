"""``python -m bench.parquet_choice``: the figures behind docs/parquet.md. The hand-written
Parquet writer and reader (``shared/reports/parquet.py``, ``parquet_reader.py``) against
pyarrow, for the two functions that would carry it (daily_summary writes the FOCUS
exports, reconcile reads the Data Exports):

- bundle: the unzipped bytes of the shared layer (built as ``lambda_factory`` builds it,
  arm64, cp311, compiled), of a pyarrow layer for each wheel pip can find for the
  runtime's platform tags, and of the two functions' code, against Lambda's 250 MB
  (262,144,000 bytes) for a function and its layers unzipped;
- cold start, **measured on this machine** (x86_64, the dev venv's pyarrow), not in
  Lambda: the median time over fresh interpreters to import each handler, alone and
  then with ``pyarrow.parquet``, and pyarrow's first write of a small table.

Figures only: no target is asserted here.
"""

from __future__ import annotations

import json
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.bundle import zipped
from bench.coldstart import ROOT, _lambda_env, _run

LAMBDA_UNZIPPED_LIMIT = 262_144_000
FUNCTIONS = ("daily_summary", "reconcile")
# (label, pyarrow version, pip platform tag): the tag the layer uses today (Amazon Linux 2
# images, glibc 2.26: Python 3.11's runtime) and the one pyarrow 26 ships for arm64
# (glibc >= 2.28: the Amazon Linux 2023 runtimes, Python 3.12 on).
PYARROW_BUILDS = (
    ("pyarrow 26.0.1, manylinux_2_28_aarch64", "26.0.1", "manylinux_2_28_aarch64"),
    ("pyarrow 20.0.0, manylinux2014_aarch64", "20.0.0", "manylinux2014_aarch64"),
)
IMPORT = "import time; t=time.perf_counter(); {stmt}; print(time.perf_counter()-t)"
FIRST_WRITE = (
    "import io, time; import pyarrow as pa, pyarrow.parquet as pq; t=time.perf_counter(); "
    "pq.write_table(pa.table({'x': [1.5], 'y': ['a']}), io.BytesIO()); "
    "print(time.perf_counter()-t)"
)


def _pip_target(target: Path, args: list[str]) -> str | None:
    """Install into ``target``; None on success, else pip's last line."""
    out = subprocess.run(
        [
            sys.executable, "-m", "pip", "install", "--no-compile", "--quiet",
            "--disable-pip-version-check", "--only-binary=:all:", "--python-version", "3.11",
            "--implementation", "cp", "--target", str(target), *args,
        ],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if out.returncode == 0:
        return None
    lines = [x for x in out.stderr.splitlines() if x.startswith("ERROR")]
    return lines[-1] if lines else "pip failed"


def _compiled_size(root: Path) -> int:
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "-j", "0", str(root)],
        capture_output=True, check=False,
    )  # fmt: skip
    return zipped(root, bytecode=True)[1]


def bundle() -> dict[str, Any]:
    from cdk.constructs.lambda_factory import PipLayerBundling

    out: dict[str, Any] = {"limit_unzipped_bytes": LAMBDA_UNZIPPED_LIMIT}
    with tempfile.TemporaryDirectory() as tmp:
        PipLayerBundling().try_bundle(tmp)
        out["shared_layer_unzipped_bytes"] = zipped(Path(tmp), bytecode=True)[1]
    out["functions_unzipped_bytes"] = {n: zipped(ROOT / "functions" / n)[1] for n in FUNCTIONS}
    builds: dict[str, Any] = {}
    for label, version, tag in PYARROW_BUILDS:
        with tempfile.TemporaryDirectory() as tmp:
            error = _pip_target(Path(tmp), ["--platform", tag, f"pyarrow=={version}"])
            builds[label] = (
                {"error": error} if error else {"unzipped_bytes": _compiled_size(Path(tmp))}
            )
    # Which pyarrow the layer's own platform tag can have at all.
    with tempfile.TemporaryDirectory() as tmp:
        error = _pip_target(Path(tmp), ["--platform", "manylinux2014_aarch64", "pyarrow==26.0.1"])
    builds["pyarrow 26.0.1, manylinux2014_aarch64 (the layer's tag)"] = (
        {"error": error} if error else {"installed": True}
    )
    for build in builds.values():
        if "unzipped_bytes" in build:
            worst = max(out["functions_unzipped_bytes"].values())
            total = out["shared_layer_unzipped_bytes"] + build["unzipped_bytes"] + worst
            build["function_and_layers_unzipped_bytes"] = total
            build["under_limit"] = total <= LAMBDA_UNZIPPED_LIMIT
    out["pyarrow_layers"] = builds
    return out


def cold_start(repeats: int) -> dict[str, Any]:
    env = _lambda_env()
    samples: dict[str, list[float]] = {}
    for _ in range(repeats):  # round-robin so noise hits every case alike
        for name in FUNCTIONS:
            handler = f"import functions.{name}.handler"
            for label, stmt in (
                (f"{name}", handler),
                (f"{name}+pyarrow.parquet", f"{handler}; import pyarrow.parquet"),
            ):
                samples.setdefault(label, []).append(_run(IMPORT.format(stmt=stmt), env)[0])
        samples.setdefault("pyarrow first write", []).append(_run(FIRST_WRITE, env)[0])
    medians = {k: round(statistics.median(v), 4) for k, v in samples.items()}
    added = {
        name: round(medians[f"{name}+pyarrow.parquet"] - medians[name], 4) for name in FUNCTIONS
    }
    import pyarrow

    return {
        "where": f"local: {platform.machine()}, Python {platform.python_version()}, "
        f"pyarrow {pyarrow.__version__}; not measured in Lambda",
        "repeats": repeats,
        "median_seconds": medians,
        "import_added_by_pyarrow_seconds": added,
    }


def main() -> int:
    report = {"bundle": bundle(), "cold_start": cold_start(repeats=11)}
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
