"""Section 3: import time of each handler module in a fresh interpreter, against boto3's."""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TIMER = "import time,sys; t=time.perf_counter(); {stmt}; print(time.perf_counter()-t)"
# What the first event pays that the import no longer does (models are built on first
# use): the settings (LedgerConfig) and the event model of instance_state.
FIRST_USE = (
    "import json, time; t=time.perf_counter(); import functions.instance_state.handler; "
    "i=time.perf_counter(); from shared.app import runtime; "
    "from shared.events.aws import InstanceStateChangeEvent as E; runtime.current_settings(); "
    "E.model_validate(json.loads(open('tests/events/ec2-state-change.json').read())); "
    "e=time.perf_counter(); print(i-t, e-i)"
)
TRACER = (
    "import time; t=time.perf_counter(); from aws_lambda_powertools import Tracer; "
    "i=time.perf_counter(); Tracer(); e=time.perf_counter(); print(i-t, e-i)"
)


def handler_modules() -> list[str]:
    return sorted(
        f"functions.{d.name}.handler"
        for d in (ROOT / "functions").iterdir()
        if (d / "handler.py").is_file()
    )


def _lambda_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_ENDPOINT")}
    env.update(
        {
            "PYDANTIC_DISABLE_PLUGINS": "__all__",
            "POWERTOOLS_SERVICE_NAME": "costtracker",
            "AWS_REGION": "us-east-1",
            "AWS_DEFAULT_REGION": "us-east-1",
        }
    )
    env.update(extra)
    return env


def _run(code: str, env: dict[str, str], extra_args: tuple[str, ...] = ()) -> list[float]:
    out = subprocess.run(
        [sys.executable, *extra_args, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr else "failed")
    return [float(x) for x in out.stdout.split()]


def measure(repeats: int = 5) -> dict[str, Any]:
    """Medians over ``repeats`` fresh interpreters, round-robin so noise hits all alike."""
    targets = {"boto3": "import boto3", **{m: f"import {m}" for m in handler_modules()}}
    samples: dict[str, list[float]] = {k: [] for k in targets}
    errors: dict[str, str] = {}
    env = _lambda_env()
    for _ in range(repeats):
        for name, stmt in targets.items():
            if name in errors:
                continue
            try:
                samples[name].append(_run(TIMER.format(stmt=stmt), env)[0])
            except (RuntimeError, subprocess.TimeoutExpired) as exc:
                errors[name] = str(exc)
    medians = {k: statistics.median(v) for k, v in samples.items() if v}
    first_import, first_use = [], []
    for _ in range(repeats):
        a, b = _run(FIRST_USE, _lambda_env(TABLE_NAME="bench-table"))
        first_import.append(a)
        first_use.append(b)
    tracer_import, tracer_init = [], []
    for _ in range(repeats):
        a, b = _run(TRACER, _lambda_env(POWERTOOLS_TRACE_DISABLED="true"))
        tracer_import.append(a)
        tracer_init.append(b)
    # Without any bytecode (the layer is built with pip --no-compile and /opt is
    # read-only): indicative, since here boto3 is uncompiled too.
    no_pyc: dict[str, list[float]] = {"boto3": [], "functions.instance_state.handler": []}
    for _ in range(repeats):
        for name in no_pyc:
            with tempfile.TemporaryDirectory() as empty:
                no_pyc[name].append(
                    _run(
                        TIMER.format(stmt=f"import {name}"),
                        _lambda_env(PYTHONDONTWRITEBYTECODE="1"),
                        ("-X", f"pycache_prefix={empty}"),
                    )[0]
                )
    return {
        "median_s": medians,
        "samples_s": samples,
        "errors": errors,
        "instance_state_first_use": {
            "import_median_s": statistics.median(first_import),
            "settings_and_first_event_median_s": statistics.median(first_use),
        },
        "tracer_import_median_s": statistics.median(tracer_import),
        "tracer_init_median_s": statistics.median(tracer_init),
        "no_bytecode_median_s": {k: statistics.median(v) for k, v in no_pyc.items()},
        "import_breakdown_s": import_breakdown("functions.instance_state.handler", env),
        "tracer_instantiated_in": tracer_uses(),
        "active_tracing_in_cdk": "tracing=lambda_.Tracing.ACTIVE"
        in (ROOT / "cdk" / "constructs" / "lambda_factory.py").read_text(),
    }


def import_breakdown(module: str, env: dict[str, str]) -> dict[str, float]:
    """Import time of ``module`` by top-level package: the sum of each module's own
    (self) time from -X importtime, so nothing is counted twice."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    totals: dict[str, float] = {}
    for line in out.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)$", line)
        if m:
            top = m.group(2).split(".")[0]
            totals[top] = totals.get(top, 0.0) + int(m.group(1)) / 1e6
    ranked = sorted(((v, k) for k, v in totals.items()), reverse=True)
    return {k: round(v, 4) for v, k in ranked[:7]}


def tracer_uses() -> list[str]:
    """Files of the Lambda code (functions/, shared/) that instantiate Powertools Tracer."""
    found = []
    for path in sorted([*(ROOT / "functions").rglob("*.py"), *(ROOT / "shared").rglob("*.py")]):
        if re.search(r"\bTracer\s*\(", path.read_text()):
            found.append(str(path.relative_to(ROOT)))
    return found
