"""``costtracker replay``: a scenario through the handlers, as a table, alerts or JSON."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from costtracker.commands.parsing import Subparsers, seconds_span
from costtracker.errors import CliError


def cmd_replay(args: argparse.Namespace) -> int:
    from costtracker.replay import replay
    from costtracker.scenario import read_scenario

    scenario = read_scenario(args.scenario)
    if args.focus_dir is not None:
        try:
            args.focus_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CliError(
                f"--focus-dir {args.focus_dir}: cannot make that directory "
                f"({exc.strerror or exc}); give a writable one"
            ) from exc
    if args.chaos is not None:
        from datetime import timedelta

        from costtracker.chaos import chaotic

        events = chaotic(scenario.events, args.chaos, timedelta(seconds=args.chaos_delay))
        scenario = scenario.model_copy(update={"events": events})
    document = _replay_or_explain(
        lambda: replay(
            scenario,
            verbose=args.verbose,
            focus_dir=args.focus_dir,
            show_progress=not args.json,
            focus_version=args.focus_version,
            emulator_mode=args.emulator,
        ),
        args.scenario,
    )
    if args.json:
        json.dump(document, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    from costtracker.alert_preview import alert_list, alert_messages

    if args.alerts:
        print(alert_messages(document))
        return 0
    from costtracker.render.jobs import job_table

    print(job_table(document))
    print(alert_list(document))
    return 0


def _replay_or_explain(run: Callable[[], dict[str, Any]], path: Path) -> dict[str, Any]:
    """A configuration the scenario makes invalid is a one-line error, not a traceback."""
    from pydantic import ValidationError

    from costtracker.errors import validation_summary

    try:
        return run()
    except ValidationError as exc:
        raise CliError(validation_summary(exc, f"{path}: invalid configuration: ")) from exc


def add_replay(sub: Subparsers) -> None:
    p = sub.add_parser("replay", help="replay a scenario through the handlers")
    p.add_argument("scenario", type=Path)
    p.add_argument("--json", action="store_true", help="print the JSON document (docs/replay.md)")
    p.add_argument("--verbose", action="store_true", help="handler logs (INFO) on stderr")
    p.add_argument(
        "--alerts",
        action="store_true",
        help="print each alert as its audience would receive it (who, subject, body)",
    )
    p.add_argument(
        "--chaos",
        type=int,
        default=None,
        metavar="SEED",
        help="deliver the events as EventBridge may: late (see --chaos-delay) and twice",
    )
    p.add_argument("--chaos-delay", type=seconds_span, default=300.0, metavar="SECONDS")
    p.add_argument(
        "--focus-dir",
        type=Path,
        default=None,
        help="write each whole UTC day's FOCUS export (and summary files) here",
    )
    p.add_argument(
        "--focus-version",
        choices=("1.2", "1.3"),
        default=None,
        help="the FOCUS version of --focus-dir's files (default: ledger.summary.focus_version,"
        " 1.2); 1.3 adds the allocation columns",
    )
    p.add_argument(
        "--emulator",
        choices=("local", "full"),
        default="local",
        help="local (default): the ledger's table in memory, the other AWS services on the"
        " embedded emulator (moto); full: the table on the emulator too (slower, the same"
        " document)",
    )
    p.set_defaults(func=cmd_replay)
