"""``python -m bench.parquet_choice``: the figures behind docs/parquet.md, for the two
functions that carry pyarrow (daily_summary writes the FOCUS exports, reconcile reads the
Data Exports):

- wheels: which pyarrow releases from the pinned one on have a ``manylinux2014_aarch64``
  wheel for CPython 3.11 (what the layer's platform tag takes: the ``python3.11`` runtime
  is Amazon Linux 2, glibc 2.26) and a ``manylinux2014_x86_64`` one (development, CI);
- bundle: the unzipped bytes of the shared layer and of the pyarrow layer, each built as
  ``cdk synth`` builds it (``lambda_factory``: arm64, cp311, compiled), and of the two
  functions' code, against Lambda's 250 MB (262,144,000 bytes) for a function and its
  layers unzipped; the build time of each layer;
- cold start, **measured on this machine** (x86_64, the dev venv's pyarrow), not in
  Lambda: the median over fresh interpreters of importing each handler as deployed (it
  imports pyarrow), the same with pyarrow stubbed out (what the handler costs without
  it), ``import pyarrow.parquet`` alone, and the first FOCUS file written and read back
  after the import.

Figures only: no target is asserted here.
"""

from __future__ import annotations

import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.bundle import zipped
from bench.coldstart import ROOT, _lambda_env, _run

LAMBDA_UNZIPPED_LIMIT = 262_144_000
FUNCTIONS = ("daily_summary", "reconcile")
PLATFORMS = ("manylinux2014_aarch64", "manylinux2014_x86_64")
IMPORT = "import time; t=time.perf_counter(); {stmt}; print(time.perf_counter()-t)"
# pyarrow replaced by empty modules: the handler's own import cost (nothing of pyarrow is
# used at import: shared.reports.parquet only names it in functions).
STUBBED = (
    "import sys, types; sys.modules['pyarrow'] = types.ModuleType('pyarrow'); "
    "sys.modules['pyarrow.parquet'] = types.ModuleType('pyarrow.parquet'); "
)
# A day of 200 FOCUS rows written and read back, after the handler's import.
FIRST_FILE = (
    "import functions.daily_summary.handler, time; from datetime import UTC, datetime; "
    "from decimal import Decimal; from shared.reports.focus import Charge, focus_row, "
    "to_parquet, COLUMN_NAMES; from shared.reports.parquet import read_columns; "
    "d=datetime(2026, 11, 2, tzinfo=UTC); q=Decimal('24'); p=Decimal('21.5'); "
    "rows=[focus_row(Charge('instance', f'job-{n}', '012345678901', 'us-east-1', f'i-{n:017x}', "
    "d, d.replace(day=3), q, q, p, p, p*q, p*q, p*q, 'instance')) for n in range(200)]; "
    "t=time.perf_counter(); data=to_parquet(rows); w=time.perf_counter(); "
    "read_columns(data, COLUMN_NAMES, source='day'); r=time.perf_counter(); print(w-t, r-w)"
)


def _pinned() -> str:
    import pyarrow

    return str(pyarrow.__version__)


def _has_wheel(version: str, tag: str) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            [
                sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
                "--disable-pip-version-check", "--only-binary=:all:", "--python-version",
                "3.11", "--implementation", "cp", "--platform", tag, "-d", tmp,
                f"pyarrow=={version}",
            ],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
    return out.returncode == 0


def wheels() -> dict[str, Any]:
    """For the pinned release and every newer one the package index lists: which of the
    two platform tags has a cp311 wheel."""
    out = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", "pyarrow",
         "--disable-pip-version-check"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    listed = next((x for x in out.stdout.splitlines() if x.startswith("Available versions:")), "")
    versions = [v.strip() for v in listed.removeprefix("Available versions:").split(",")]
    pinned = _pinned()

    def key(v: str) -> tuple[int, ...]:
        return tuple(int(p) for p in v.split(".") if p.isdigit())

    newer = [v for v in versions if v and key(v) >= key(pinned)]
    return {
        "pinned": pinned,
        "cp311_wheels": {v: {tag: _has_wheel(v, tag) for tag in PLATFORMS} for v in newer},
    }


def _layer(bundling: Any) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        bundling.try_bundle(tmp)
        seconds = time.perf_counter() - start
        z, u, n = zipped(Path(tmp), bytecode=True)
    return {"unzipped_bytes": u, "zipped_bytes": z, "files": n, "build_seconds": round(seconds, 1)}


def bundle() -> dict[str, Any]:
    from cdk.constructs.lambda_factory import PipLayerBundling, pyarrow_bundling

    shared, arrow = _layer(PipLayerBundling()), _layer(pyarrow_bundling())
    code = {n: zipped(ROOT / "functions" / n)[1] for n in FUNCTIONS}
    totals = {n: code[n] + shared["unzipped_bytes"] + arrow["unzipped_bytes"] for n in FUNCTIONS}
    return {
        "limit_unzipped_bytes": LAMBDA_UNZIPPED_LIMIT,
        "shared_layer": shared,
        "pyarrow_layer": arrow,
        "functions_unzipped_bytes": code,
        "function_and_layers_unzipped_bytes": totals,
        "under_limit": all(t <= LAMBDA_UNZIPPED_LIMIT for t in totals.values()),
    }


def cold_start(repeats: int) -> dict[str, Any]:
    env = _lambda_env()
    samples: dict[str, list[float]] = {}
    for _ in range(repeats):  # round-robin so noise hits every case alike
        for name in FUNCTIONS:
            handler = f"import functions.{name}.handler"
            for label, code in (
                (name, IMPORT.format(stmt=handler)),
                (f"{name} without pyarrow", STUBBED + IMPORT.format(stmt=handler)),
            ):
                samples.setdefault(label, []).append(_run(code, env)[0])
        samples.setdefault("import pyarrow.parquet", []).append(
            _run(IMPORT.format(stmt="import pyarrow.parquet"), env)[0]
        )
        write, read = _run(FIRST_FILE, env)
        samples.setdefault("first FOCUS file written (200 rows)", []).append(write)
        samples.setdefault("first FOCUS file read back", []).append(read)
    medians = {k: round(statistics.median(v), 4) for k, v in samples.items()}
    added = {
        name: round(medians[name] - medians[f"{name} without pyarrow"], 4) for name in FUNCTIONS
    }
    return {
        "where": f"local: {platform.machine()}, Python {platform.python_version()}, "
        f"pyarrow {_pinned()}; not measured in Lambda",
        "repeats": repeats,
        "median_seconds": medians,
        "import_added_by_pyarrow_seconds": added,
    }


def main() -> int:
    report = {"wheels": wheels(), "bundle": bundle(), "cold_start": cold_start(repeats=11)}
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
