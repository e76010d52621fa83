#!/usr/bin/env python3
"""CDK entry point (``cdk.json``: ``.venv/bin/python cdk/app.py``, run from the repo root).

Reads the context (cdk.json, then -c) into ``StackSettings`` once, builds the stacks
``stacks`` names (the tracker; the member-account stack), and runs cdk-nag
(AwsSolutions) as a validation plugin.
"""

from __future__ import annotations

import json
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

from aws_cdk import App, Environment, Stack, Validations  # noqa: E402
from cdk_nag import AwsSolutionsChecks  # noqa: E402

from cdk.context import SettingsError, load_settings  # noqa: E402
from cdk.stack import CostTrackerStack  # noqa: E402
from cdk.stack_settings import StackSettings  # noqa: E402

CDK_JSON = REPO_ROOT / "cdk.json"


def file_context(path: Path = CDK_JSON) -> dict[str, Any]:
    """cdk.json's "context" as written (the layer under every -c)."""
    if not path.is_file():
        return {}
    context = json.loads(path.read_text()).get("context", {})
    return dict(context) if isinstance(context, dict) else {}


def build_app(
    context: Mapping[str, Any] | None = None,
    *,
    outdir: str | None = None,
    nag: bool = True,
) -> tuple[App, Stack, StackSettings]:
    """The app and its first stack (the tracker unless ``stacks`` is only ``member``);
    raises ``SettingsError`` on an invalid context."""
    app = App(context=dict(context) if context is not None else None, outdir=outdir)
    settings = load_settings(app.node.get_all_context(), file_context())
    stacks: list[Stack] = []
    if "tracker" in settings.stacks:
        stacks.append(
            CostTrackerStack(
                app,
                settings.stack_name,
                settings=settings,
                env=Environment(account=settings.account, region=settings.region),
                description="costtracker: live cost ledger for ML training jobs",
            )
        )
    if "member" in settings.stacks:
        from cdk.member_stack import CostTrackerMemberStack

        member = settings.member
        stacks.append(
            CostTrackerMemberStack(
                app,
                member.stack_name,
                settings=settings,
                env=Environment(account=member.account, region=member.region)
                if member.account or member.region
                else None,
                description="costtracker member account: forwards events, read-only role",
            )
        )
    if nag:
        Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app, stacks[0], settings


def main() -> None:
    try:
        app, _, _ = build_app()
    except SettingsError as error:
        sys.exit(str(error))
    app.synth()


if __name__ == "__main__":
    main()
