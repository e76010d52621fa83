"""``costtracker summaries``: re-run days on the deployed stack (backfill), or read one
stored daily summary through the API (show)."""

from __future__ import annotations

import argparse
import os

from costtracker.commands.api import api_client, api_options, emit
from costtracker.commands.aws import require_region
from costtracker.commands.parsing import Subparsers, iso_day
from costtracker.errors import CliError

# The environment the deployed stack's functions get (see the stack outputs).
BACKFILL_ENV = ("TABLE_NAME", "REPORT_BUCKET")


def cmd_backfill(args: argparse.Namespace) -> int:
    """Re-run the daily summaries of a range of days against the deployed stack (the
    environment names it: TABLE_NAME, REPORT_BUCKET, FINANCE_TOPIC_ARN, LEDGER_CONFIG)."""
    from datetime import UTC, datetime, timedelta
    from decimal import Decimal

    from pydantic import ValidationError

    from costtracker.errors import validation_summary
    from costtracker.progress import Progress
    from shared.app import runtime
    from shared.services.alerts import AlertPoster
    from shared.services.summaries import publish_summary, summarize_day

    if args.to < args.from_:
        raise CliError("--from is after --to: give the first day, then the last")
    needed = [*BACKFILL_ENV, *(["FINANCE_TOPIC_ARN"] if args.notify else [])]
    missing = [name for name in needed if not os.environ.get(name)]
    if missing:
        raise CliError(
            f"{', '.join(missing)} not set: export the deployed stack's settings (its "
            "outputs name the table, bucket and topic), and LEDGER_CONFIG if you changed "
            "the CDK context"
        )
    require_region()
    try:
        runtime.current_settings()  # validated up front: a bad setting is one line
    except ValidationError as exc:
        raise CliError(validation_summary(exc, "the stack's settings: ")) from exc
    summaries = runtime.summary_store()
    now = datetime.now(UTC)
    day = args.from_
    progress = Progress((args.to - args.from_).days + 1, "backfill")
    while day <= args.to:
        history = {
            d: Decimal(s["total_usd"])
            for d, s in summaries.get_summaries(
                [day - timedelta(days=n) for n in range(1, 8)]
            ).items()
        }
        summary, rows = summarize_day(runtime.ledger_deps(), day, now, history)
        summaries.put_summary(day, summary)
        publish_summary(
            summary,
            rows,
            runtime.report_store(),
            AlertPoster(runtime.current().outbox_store, runtime.notifier())
            if args.notify
            else None,
            runtime.current_settings().config.summary.focus_version,
            now,
        )
        progress.advance()
        print(f"{day}: {summary['total_usd']} USD")
        day += timedelta(days=1)
    progress.close()
    return 0


def cmd_summaries_show(args: argparse.Namespace) -> int:
    from costtracker.render.reports import summary

    client = api_client(args)
    body = client.request("GET", client.path("summaries", args.day.isoformat()))
    return emit(args, body, summary)


def add_summaries(sub: Subparsers) -> None:
    p = sub.add_parser("summaries", help="daily summaries")
    summaries_sub = p.add_subparsers(dest="summaries_command", required=True)
    backfill = summaries_sub.add_parser(
        "backfill", help="re-run days on the deployed stack (same outputs, overwritten)"
    )
    backfill.add_argument("--from", dest="from_", type=iso_day, required=True)
    backfill.add_argument("--to", type=iso_day, required=True)
    backfill.add_argument("--notify", action="store_true", help="also message finance")
    backfill.set_defaults(func=cmd_backfill)

    show = summaries_sub.add_parser("show", help="one stored daily summary, readable")
    show.add_argument("day", type=iso_day)
    api_options(show, cmd_summaries_show)
