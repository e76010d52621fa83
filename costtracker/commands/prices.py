"""``costtracker prices``: the rate the ledger would use for an instance type."""

from __future__ import annotations

import argparse

from costtracker.commands.api import api_client, api_options, emit
from costtracker.commands.parsing import Subparsers, did_you_mean, instance_types, region_name
from costtracker.errors import CliError


def cmd_prices(args: argparse.Namespace) -> int:
    from costtracker.render.reports import price

    known = instance_types()
    if known and args.instance_type not in known:
        raise CliError(
            f"{args.instance_type!r} is not an instance type AWS lists"
            + (did_you_mean(args.instance_type, known) or ": see `aws ec2 describe-instance-types`")
        )
    query = {"instance_type": args.instance_type, "region": args.region}
    return emit(args, api_client(args).request("GET", "/prices", query), price)


def add_prices(sub: Subparsers) -> None:
    p = sub.add_parser("prices", help="the rate the ledger would use")
    p.add_argument("instance_type")
    p.add_argument("--region", type=region_name, default="us-east-1")
    api_options(p, cmd_prices)
