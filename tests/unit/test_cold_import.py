"""Cold start, guarded by structure (never by time): importing a handler builds no
pydantic model of ours (models are built on first use: ``shared.config.base._Config``) and
does not import what it does not need at load (boto3, the API resolver, the Parquet
module and pyarrow). Each handler is imported in a fresh interpreter, as Lambda does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shared.app.functions import FUNCTIONS

ROOT = Path(__file__).resolve().parents[2]
HANDLERS = sorted(p.parent.name for p in (ROOT / "functions").glob("*/handler.py"))

PROBE = """
import importlib, json, sys
importlib.import_module(sys.argv[1])
from pydantic import BaseModel

def subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from subclasses(sub)

built = sorted(
    f"{c.__module__}.{c.__qualname__}"
    for c in set(subclasses(BaseModel))
    if c.__module__.startswith(("shared", "functions")) and c.__dict__.get("__pydantic_complete__")
)
print(json.dumps({"built": built, "modules": sorted(sys.modules)}))
"""

# Imported at load by no handler: boto3 (clients are made on first use, in
# shared.app.runtime), Powertools' parser (shared.events.aws has its own envelope), the local
# tooling.
NEVER = ("boto3", "aws_lambda_powertools.utilities.parser", "costtracker", "moto")
# Only where used. pydantic's plugin loader (and importlib.metadata with it) comes with
# the first model built: in the API's resolver, never in an event handler.
ONLY_IN = {
    "aws_lambda_powertools.event_handler": {"job_cost_api"},
    "pydantic.plugin._loader": {"job_cost_api"},
    "shared.reports.parquet": {"daily_summary", "reconcile"},
    "shared.reports.focus": {"daily_summary", "reconcile"},
    # Only the functions deployed with the pyarrow layer (docs/parquet.md).
    "pyarrow": {f.name for f in FUNCTIONS if f.uses_pyarrow},
}


def _probe(handler: str) -> dict[str, list[str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "LEDGER_"))}
    env.update(PYDANTIC_DISABLE_PLUGINS="__all__", AWS_REGION="us-east-1")
    out = subprocess.run(
        [sys.executable, "-c", PROBE, f"functions.{handler}.handler"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result: dict[str, list[str]] = json.loads(out.stdout)
    return result


@pytest.mark.parametrize("handler", HANDLERS)
def test_handler_import_builds_no_model_and_imports_only_what_it_uses(handler: str) -> None:
    probe = _probe(handler)
    assert probe["built"] == [], f"built at import (make them lazy): {probe['built']}"
    modules = set(probe["modules"])
    assert f"functions.{handler}.handler" in modules
    assert not [m for m in NEVER if m in modules]
    for module, allowed in ONLY_IN.items():
        if handler not in allowed:
            assert module not in modules, f"{handler} imports {module} at load"


def test_the_modules_kept_out_of_handlers_exist() -> None:
    """A module of ONLY_IN that was moved or renamed is in no handler's imports: its check
    above would pass whatever the handlers import."""
    import importlib.util

    assert [m for m in ONLY_IN if importlib.util.find_spec(m) is None] == []


def test_the_probe_sees_a_model_built_at_import() -> None:
    """The probe can fail: a model validated at import shows up as built."""
    probe_code = PROBE.replace(
        "importlib.import_module(sys.argv[1])",
        "importlib.import_module(sys.argv[1]); import shared.config.ledger as c; c.LedgerConfig()",
    )
    out = subprocess.run(
        [sys.executable, "-c", probe_code, "functions.day_boundary.handler"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "shared.config.ledger.LedgerConfig" in json.loads(out.stdout)["built"]
