"""``costtracker``: replay scenarios, run the demo, read job costs from the API.

Every mistake is one line on stderr naming the problem and what to do, with a non-zero
exit (2: bad input, 1: a failure, 130: interrupted, 141: the reader of stdout went
away), never a traceback; ``--debug`` shows the traceback.

Each command group is a module of ``costtracker.commands`` (its ``add_*`` function
declares the options, its ``cmd_*`` functions do the work); ``build_parser`` lists them
and ``main`` is the one place errors are reported.
"""

from __future__ import annotations

import argparse
import os
import sys

from costtracker.commands.accounts import add_accounts
from costtracker.commands.budgets import add_budgets
from costtracker.commands.config import add_config
from costtracker.commands.demo import add_dashboard, add_demo
from costtracker.commands.dlq import add_dlq
from costtracker.commands.efficiency import add_efficiency
from costtracker.commands.jobs import add_jobs
from costtracker.commands.parsing import Parser
from costtracker.commands.prices import add_prices
from costtracker.commands.replay import add_replay
from costtracker.commands.summaries import add_summaries
from costtracker.errors import CliError

EXIT_BROKEN_PIPE = 141  # as a shell reports a tool killed by SIGPIPE


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="costtracker", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (
        add_replay,
        add_demo,
        add_dashboard,
        add_summaries,
        add_jobs,
        add_efficiency,
        add_budgets,
        add_prices,
        add_config,
        add_dlq,
        add_accounts,
    ):
        add(sub)
    for choice in sub.choices.values():  # `costtracker jobs show X --debug` works too
        _debug_everywhere(choice)
    return parser


def _debug_everywhere(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _debug_everywhere(child)


def _aws_error(exc: Exception) -> str | None:
    """botocore's errors in one line with what to do (None: not one of them)."""
    try:
        from botocore import exceptions as boto
    except ImportError:  # pragma: no cover - botocore is a dependency
        return None
    if isinstance(exc, boto.NoRegionError):
        return "no AWS region: pass --region, or set AWS_REGION (or a profile's region)"
    if isinstance(exc, boto.NoCredentialsError | boto.PartialCredentialsError):
        return "no AWS credentials: configure a profile (AWS_PROFILE) or export the keys"
    if isinstance(exc, boto.ClientError):
        error = exc.response.get("Error", {})
        return f"AWS refused: {error.get('Code', '?')}: {error.get('Message', '')}".strip()
    if isinstance(exc, boto.BotoCoreError):
        return f"AWS: {exc}"
    return None


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    debug = bool(getattr(args, "debug", False)) or bool(os.environ.get("COSTTRACKER_DEBUG"))
    try:
        result: int = args.func(args)
        sys.stdout.flush()
        return result
    except BrokenPipeError:
        # The reader (e.g. `| head`) has what it wanted: stop quietly, and keep Python
        # from reporting the failed flush of stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        print("costtracker: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if debug:
            raise
        print(f"costtracker: {_one_line(exc)}", file=sys.stderr)
        return exc.exit_code if isinstance(exc, CliError) else 1


def _one_line(exc: Exception) -> str:
    from costtracker.client import ApiError

    if isinstance(exc, CliError | ApiError):
        text = str(exc)
    else:
        text = _aws_error(exc) or (
            f"unexpected error ({type(exc).__name__}: {exc}); run again with --debug "
            "for the traceback and report it"
        )
    return " ".join(text.split())


if __name__ == "__main__":
    sys.exit(main())
