"""What every command that reads the job-cost API shares: its options, its client, and
printing the answer (the API's JSON with sorted keys, or a readable rendering)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from costtracker.client import ApiClient

Command = Callable[[argparse.Namespace], int]


def api_client(args: argparse.Namespace) -> ApiClient:
    from costtracker.client import ApiClient

    return ApiClient(args.endpoint)


def emit(args: argparse.Namespace, body: Any, human: Callable[[Any], str]) -> int:
    if args.json:
        json.dump(body, sys.stdout, indent=2, sort_keys=True, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print(human(body))
    return 0


def api_options(parser: argparse.ArgumentParser, func: Command) -> None:
    parser.add_argument(
        "--endpoint",
        default=None,
        help="the API's URL (default $COSTTRACKER_ENDPOINT or the local demo's)",
    )
    parser.add_argument("--json", action="store_true", help="the API's JSON, keys sorted")
    parser.set_defaults(func=func)
