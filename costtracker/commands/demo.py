"""``costtracker demo`` (the bundled example replayed, its API and dashboard served) and
``costtracker dashboard`` (the dashboard for a deployed API)."""

from __future__ import annotations

import argparse
from pathlib import Path

from costtracker.commands.parsing import Subparsers, port_number


def cmd_demo(args: argparse.Namespace) -> int:
    from costtracker.demo import run_demo

    return run_demo(
        host=args.host,
        port=args.port,
        serve=not args.no_serve,
        scenario_path=args.scenario,
        verbose=args.verbose,
        as_caller=args.as_caller,
        allow_remote=args.allow_remote,
        budgets_path=args.budgets,
    )


def add_demo(sub: Subparsers) -> None:
    p = sub.add_parser(
        "demo", help="replay the bundled example and serve the job-cost API and the dashboard"
    )
    p.add_argument("--no-serve", action="store_true")
    p.add_argument("--host", default="127.0.0.1", help="a loopback address (default 127.0.0.1)")
    p.add_argument("--port", type=port_number, default=8080)
    p.add_argument(
        "--allow-remote",
        action="store_true",
        help="listen on a non-loopback --host: every caller that reaches it gets the --as "
        "identity, with no credentials checked",
    )
    p.add_argument(
        "--as",
        dest="as_caller",
        default=None,
        metavar="WHO",
        help="the caller the local API resolves: team:NAME, finance, admin or a caller ARN "
        "(matched against the scenario's access rules); default: the local admin "
        "arn:aws:iam::000000000000:user/costtracker-local",
    )
    p.add_argument("--scenario", type=Path, default=None, help="another scenario to show")
    p.add_argument(
        "--budgets",
        type=Path,
        default=None,
        metavar="FILE",
        help="a JSON list of budgets (as PUT /budgets/{id} takes them) to set after the replay"
        " (default with the bundled example: its budgets)",
    )
    p.add_argument("--verbose", action="store_true")
    p.set_defaults(func=cmd_demo)


def cmd_dashboard(args: argparse.Namespace) -> int:
    from costtracker.dashboard.server import run_dashboard

    return run_dashboard(args.endpoint, args.host, args.port)


def add_dashboard(sub: Subparsers) -> None:
    p = sub.add_parser(
        "dashboard", help="the dashboard on the loopback for a deployed API (calls signed SigV4)"
    )
    p.add_argument("--endpoint", required=True, help="the deployed API's URL (with its stage)")
    p.add_argument("--host", default="127.0.0.1", help="a loopback address (default 127.0.0.1)")
    p.add_argument("--port", type=port_number, default=8080)
    p.set_defaults(func=cmd_dashboard)
