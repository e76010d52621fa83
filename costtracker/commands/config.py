"""``costtracker config show``: the stack's effective CDK configuration."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from costtracker.commands.parsing import Subparsers
from costtracker.errors import CliError


def _context_overrides(pairs: list[str]) -> dict[str, str]:
    overrides: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CliError(f"-c {pair}: give KEY=VALUE, e.g. -c ledger.reconcile.enabled=true")
        overrides[key] = value
    return overrides


def cmd_config_show(args: argparse.Namespace) -> int:
    """The effective CDK configuration and where each value came from (default,
    cdk.json, -c), exactly as ``cdk synth`` would resolve it."""
    from cdk.context import SettingsError, effective_settings, settings_with_sources

    path: Path = args.cdk_json
    if not path.is_file():
        raise CliError(
            f"--cdk-json {path}: no such file; run from the repository root or give its cdk.json"
        )
    try:
        document = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CliError(f"--cdk-json {path}: cannot read it as JSON ({exc})") from exc
    file_context = document.get("context", {}) if isinstance(document, dict) else {}
    overrides = _context_overrides(args.context)
    try:
        settings, resolved = settings_with_sources({**file_context, **overrides}, file_context)
    except SettingsError as exc:
        # One line: the problems (one per key, each named) joined with "; ".
        first, *problems = str(exc).splitlines()
        raise CliError(f"{first} {'; '.join(p.strip() for p in problems)}".strip()) from exc
    rows = effective_settings(settings, resolved)
    if args.json:
        json.dump(
            {key: {"value": value, "source": source} for key, value, source in rows},
            sys.stdout,
            indent=2,
        )
        sys.stdout.write("\n")
        return 0
    width = max(len(key) for key, _, _ in rows)
    for key, value, source in rows:
        print(f"{key.ljust(width)}  {source.ljust(8)}  {json.dumps(value)}")
    return 0


def add_config(sub: Subparsers) -> None:
    p = sub.add_parser("config", help="the CDK configuration of the stack")
    config_sub = p.add_subparsers(dest="config_command", required=True)
    show = config_sub.add_parser(
        "show", help="the effective configuration, with where each value came from"
    )
    show.add_argument(
        "-c",
        "--context",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a context value as given to cdk (repeatable), e.g. -c ledger.reconcile.enabled=true",
    )
    show.add_argument("--cdk-json", type=Path, default=Path("cdk.json"), help="default: ./cdk.json")
    show.add_argument("--json", action="store_true", help="as a JSON document")
    show.set_defaults(func=cmd_config_show)
