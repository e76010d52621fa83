#!/usr/bin/env python3
"""CDK entry point (``cdk.json``: ``python3 cdk/app.py``, run from the repo root).

Reads the context into ``StackSettings`` once, builds the stack for the configured
account and region, and runs cdk-nag (AwsSolutions) as a validation plugin.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

_CDK_DIR = Path(__file__).resolve().parent
REPO_ROOT = _CDK_DIR.parent
# `python3 cdk/app.py` puts cdk/ first on sys.path, where cdk/constructs would shadow
# the `constructs` library: take it off, and put the repo root (for `cdk.*` and
# `shared`) in its place.
sys.path[:] = [p for p in sys.path if p and Path(p).resolve() != _CDK_DIR]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from aws_cdk import App, Environment, Validations  # noqa: E402
from cdk_nag import AwsSolutionsChecks  # noqa: E402

from cdk.settings import SettingsError, StackSettings, load_settings  # noqa: E402
from cdk.stack import CostTrackerStack  # noqa: E402


def build_app(
    context: Mapping[str, Any] | None = None,
    *,
    outdir: str | None = None,
    nag: bool = True,
) -> tuple[App, CostTrackerStack, StackSettings]:
    """The app and its stack; raises ``SettingsError`` on an invalid context."""
    app = App(context=dict(context) if context is not None else None, outdir=outdir)
    settings = load_settings(app.node.try_get_context)
    stack = CostTrackerStack(
        app,
        settings.stack_name,
        settings=settings,
        env=Environment(account=settings.account, region=settings.region),
        description="costtracker: live cost ledger for ML training jobs",
    )
    if nag:
        Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app, stack, settings


def main() -> None:
    try:
        app, _, _ = build_app()
    except SettingsError as error:
        sys.exit(str(error))
    app.synth()


if __name__ == "__main__":
    main()
