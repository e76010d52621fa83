"""``costtracker dlq redrive``: invoke a function again with the events parked in its
dead-letter queue, then delete them."""

from __future__ import annotations

import argparse
import json

from costtracker.commands.aws import require_region
from costtracker.commands.parsing import Subparsers, bounded_int


def cmd_redrive(args: argparse.Namespace) -> int:
    import boto3

    from costtracker.dlq import lambda_invoker, redrive

    region = require_region(args.region, args.queue_url)
    result = redrive(
        boto3.client("sqs", region_name=region),
        args.queue_url,
        lambda_invoker(boto3.client("lambda", region_name=region), args.function_name),
        args.limit,
    )
    print(json.dumps({"redriven": result.redriven, "failed": result.failed}, indent=2))
    return 1 if result.failed else 0


def add_dlq(sub: Subparsers) -> None:
    p = sub.add_parser("dlq", help="dead-letter queues of the deployed stack")
    dlq_sub = p.add_subparsers(dest="dlq_command", required=True)
    redrive = dlq_sub.add_parser("redrive", help="invoke parked events again, then delete")
    redrive.add_argument("--queue-url", required=True)
    redrive.add_argument("--function-name", required=True)
    redrive.add_argument("--region", default=None, help="default: the queue URL's, AWS_REGION")
    redrive.add_argument("--limit", type=bounded_int(100_000), default=1000)
    redrive.set_defaults(func=cmd_redrive)
