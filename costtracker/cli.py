"""``costtracker``: replay scenarios and run the demo on the embedded emulator."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date
from pathlib import Path
from typing import Any

from pydantic import ValidationError


def _job_table(document: dict[str, Any]) -> str:
    from shared.views import cents

    rows = [("JOB", "STATUS", "INSTANCE", "EBS", "TOTAL", "HOURS", "NOTE")]
    from decimal import Decimal

    for job in document["jobs"]:
        cost = job["cost_usd"]
        note = "" if job.get("complete", True) else "incomplete: unpriced"
        rows.append(
            (
                job["job_id"][:28],
                job["status"],
                cents(Decimal(cost["instance"])),
                cents(Decimal(cost["ebs"])),
                cents(Decimal(cost["total"])),
                f"{job['instance_seconds'] / 3600:.2f}",
                note,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    lines.append(f"as of {document['as_of']} (estimated: live events, not yet the bill)")
    for rejected in document.get("rejected_events", []):
        lines.append(f"rejected event {rejected['event_id']}: {rejected['error']}")
    for alert in document.get("admin_alerts", []):
        lines.append(f"admin alert: {alert['subject']}")
    return "\n".join(lines)


def cmd_replay(args: argparse.Namespace) -> int:
    from costtracker.replay import replay
    from costtracker.scenario import load_scenario

    try:
        scenario = load_scenario(args.scenario)
    except (OSError, json.JSONDecodeError, ValidationError) as exc:
        print(f"costtracker replay: cannot read {args.scenario}: {exc}", file=sys.stderr)
        return 2
    if args.chaos is not None:
        from datetime import timedelta

        from costtracker.chaos import chaotic

        events = chaotic(scenario.events, args.chaos, timedelta(seconds=args.chaos_delay))
        scenario = scenario.model_copy(update={"events": events})
    try:
        document = replay(
            scenario, verbose=args.verbose, focus_dir=args.focus_dir, show_progress=not args.json
        )
    except ValidationError as exc:
        print(f"costtracker replay: {args.scenario}: invalid configuration: {exc}", file=sys.stderr)
        return 2
    if args.json:
        json.dump(document, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(_job_table(document))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from costtracker.demo import run_demo

    return run_demo(
        host=args.host,
        port=args.port,
        serve=not args.no_serve,
        scenario_path=args.scenario,
        verbose=args.verbose,
    )


def cmd_backfill(args: argparse.Namespace) -> int:
    """Re-run the daily summaries of a range of days against the deployed stack (the
    environment names it: TABLE_NAME, REPORT_BUCKET, FINANCE_TOPIC_ARN, LEDGER_CONFIG)."""
    from datetime import UTC, datetime, timedelta
    from decimal import Decimal

    from costtracker.progress import Progress
    from shared import runtime
    from shared.services.summaries import publish_summary, summarize_day

    if args.to < args.from_:
        print("costtracker summaries backfill: --from is after --to", file=sys.stderr)
        return 2
    ledger = runtime.ledger()
    config = runtime.current_settings().config
    now = datetime.now(UTC)
    day = args.from_
    progress = Progress((args.to - args.from_).days + 1, "backfill")
    while day <= args.to:
        history = {
            d: Decimal(s["total_usd"])
            for d, s in ledger.get_summaries([day - timedelta(days=n) for n in range(1, 8)]).items()
        }
        summary, rows = summarize_day(ledger, config, day, now, history)
        ledger.put_summary(day, summary)
        publish_summary(
            summary, rows, runtime.report_store(), runtime.notifier() if args.notify else None
        )
        progress.advance()
        print(f"{day}: {summary['total_usd']} USD")
        day += timedelta(days=1)
    progress.close()
    return 0


def cmd_redrive(args: argparse.Namespace) -> int:
    import boto3

    from costtracker.dlq import lambda_invoker, redrive

    result = redrive(
        boto3.client("sqs"),
        args.queue_url,
        lambda_invoker(boto3.client("lambda"), args.function_name),
        args.limit,
    )
    print(json.dumps({"redriven": result.redriven, "failed": result.failed}, indent=2))
    return 1 if result.failed else 0


def _api(args: argparse.Namespace) -> Any:
    from costtracker.client import ApiClient

    return ApiClient(args.endpoint)


def _emit(args: argparse.Namespace, body: Any, human: Any) -> int:
    if args.json:
        json.dump(body, sys.stdout, indent=2, sort_keys=True)
        sys.stdout.write("\n")
    else:
        print(human(body))
    return 0


def cmd_api(args: argparse.Namespace) -> int:
    """The API commands: jobs ls|show|items|compare, budgets ls|set|rm, summaries show,
    prices. Errors are the API's own 4xx messages."""
    from costtracker import render
    from costtracker.client import ApiError

    client = _api(args)
    try:
        if args.command == "jobs" and args.jobs_command == "ls":
            body = client.request(
                "GET",
                "/jobs",
                {
                    "project": args.project,
                    "team": args.team,
                    "status": args.status,
                    "from": args.from_,
                    "to": args.to,
                    "limit": args.limit,
                    "next_token": args.next_token,
                },
            )
            return _emit(args, body, render.job_list)
        if args.command == "jobs" and args.jobs_command == "show":
            return _emit(args, client.request("GET", f"/jobs/{args.job_id}"), render.job_show)
        if args.command == "jobs" and args.jobs_command == "items":
            body = client.request("GET", f"/jobs/{args.job_id}/items", {"limit": args.limit})
            return _emit(
                args,
                body,
                lambda b: render.table(
                    [("KIND", "AT", "DETAIL")]
                    + [
                        (
                            i["kind"],
                            i["at"] or "-",
                            str(
                                i.get("cost_usd")
                                or i.get("object")
                                or i.get("action")
                                or i.get("end")
                                or ""
                            ),
                        )
                        for i in b["items"]
                    ]
                ),
            )
        if args.command == "jobs" and args.jobs_command == "compare":
            body = client.request("GET", "/compare", {"jobs": ",".join(args.job_ids)})
            return _emit(args, body, render.compare)
        if args.command == "budgets" and args.budgets_command == "ls":
            body = client.request("GET", "/budgets")
            return _emit(
                args,
                body,
                lambda b: render.table(
                    [("BUDGET", "PERIOD", "SPEND", "AMOUNT", "%")]
                    + [
                        (
                            x["budget_id"],
                            x["period"],
                            render.usd(x["spend_usd"]),
                            render.usd(x["amount_usd"]),
                            x["percent"],
                        )
                        for x in b["budgets"]
                    ]
                ),
            )
        if args.command == "budgets" and args.budgets_command == "set":
            budget = json.loads(args.definition)
            body = client.request("PUT", f"/budgets/{args.budget_id}", body=budget)
            return _emit(args, body, lambda b: f"budget {b['budget_id']} set")
        if args.command == "budgets" and args.budgets_command == "rm":
            body = client.request("DELETE", f"/budgets/{args.budget_id}")
            return _emit(args, body, lambda b: f"budget {b['budget_id']} deleted")
        if args.command == "summaries" and args.summaries_command == "show":
            body = client.request("GET", f"/summaries/{args.day}")
            return _emit(args, body, lambda b: json.dumps(b, indent=2))
        if args.command == "prices":
            body = client.request(
                "GET", "/prices", {"instance_type": args.instance_type, "region": args.region}
            )
            return _emit(
                args,
                body,
                lambda b: (
                    f"{b['instance_type']} in {b['region']}: "
                    f"{render.usd(b['list_usd_per_hour'])}/h "
                    f"list, {render.usd(b['effective_usd_per_hour'])}/h effective "
                    f"({b['source']}, checked {b['checked_on']})"
                ),
            )
    except ApiError as error:
        print(f"costtracker: {error}", file=sys.stderr)
        return 1
    raise AssertionError(f"unhandled command {args.command}")


def cmd_config_show(args: argparse.Namespace) -> int:
    """The effective CDK configuration and where each value came from (default,
    cdk.json, -c), exactly as ``cdk synth`` would resolve it."""
    from cdk.settings import SettingsError, effective_settings, settings_with_sources

    path: Path = args.cdk_json
    try:
        document = json.loads(path.read_text()) if path.is_file() else {}
    except (OSError, json.JSONDecodeError) as exc:
        print(f"costtracker config show: cannot read {path}: {exc}", file=sys.stderr)
        return 2
    file_context = document.get("context", {}) if isinstance(document, dict) else {}
    overrides: dict[str, str] = {}
    for pair in args.context:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            print(f"costtracker config show: -c {pair}: give KEY=VALUE", file=sys.stderr)
            return 2
        overrides[key] = value
    try:
        settings, resolved = settings_with_sources({**file_context, **overrides}, file_context)
    except SettingsError as exc:
        print(f"costtracker config show: {exc}", file=sys.stderr)
        return 2
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


def _api_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--endpoint",
        default=None,
        help="the API (default $COSTTRACKER_ENDPOINT or the local demo's)",
    )
    parser.add_argument("--json", action="store_true", help="the API's JSON, keys sorted")
    parser.set_defaults(func=cmd_api)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="costtracker", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p_replay = sub.add_parser("replay", help="replay a scenario through the handlers")
    p_replay.add_argument("scenario", type=Path)
    p_replay.add_argument("--json", action="store_true", help="print the JSON document (SPEC)")
    p_replay.add_argument("--verbose", action="store_true", help="handler logs (INFO) on stderr")
    p_replay.add_argument(
        "--chaos",
        type=int,
        default=None,
        metavar="SEED",
        help="deliver the events as EventBridge may: late (see --chaos-delay) and twice",
    )
    p_replay.add_argument("--chaos-delay", type=float, default=300.0, metavar="SECONDS")
    p_replay.add_argument(
        "--focus-dir",
        type=Path,
        default=None,
        help="write each whole UTC day's FOCUS 1.2 export (and summary files) here",
    )
    p_replay.set_defaults(func=cmd_replay)

    p_demo = sub.add_parser("demo", help="replay the bundled example and serve the job-cost API")
    p_demo.add_argument("--no-serve", action="store_true")
    p_demo.add_argument("--host", default="127.0.0.1")
    p_demo.add_argument("--port", type=int, default=8080)
    p_demo.add_argument("--scenario", type=Path, default=None, help="another scenario to show")
    p_demo.add_argument("--verbose", action="store_true")
    p_demo.set_defaults(func=cmd_demo)

    p_summaries = sub.add_parser("summaries", help="daily summaries of the deployed stack")
    summaries_sub = p_summaries.add_subparsers(dest="summaries_command", required=True)
    p_backfill = summaries_sub.add_parser(
        "backfill", help="re-run days (same outputs, overwritten idempotently)"
    )
    p_backfill.add_argument("--from", dest="from_", type=date.fromisoformat, required=True)
    p_backfill.add_argument("--to", type=date.fromisoformat, required=True)
    p_backfill.add_argument("--notify", action="store_true", help="also message finance")
    p_backfill.set_defaults(func=cmd_backfill)

    p_show = summaries_sub.add_parser("show", help="one stored daily summary")
    p_show.add_argument("day", type=date.fromisoformat)
    _api_options(p_show)

    p_jobs = sub.add_parser("jobs", help="job costs from the API")
    jobs_sub = p_jobs.add_subparsers(dest="jobs_command", required=True)
    p_ls = jobs_sub.add_parser("ls", help="jobs active in a date range")
    for option in ("--project", "--team", "--status", "--next-token"):
        p_ls.add_argument(option)
    p_ls.add_argument("--from", dest="from_")
    p_ls.add_argument("--to")
    p_ls.add_argument("--limit", type=int, default=20)
    _api_options(p_ls)
    p_job = jobs_sub.add_parser("show", help="one job's cost breakdown")
    p_job.add_argument("job_id")
    _api_options(p_job)
    p_items = jobs_sub.add_parser("items", help="a job's segments, checkpoints, waste")
    p_items.add_argument("job_id")
    p_items.add_argument("--limit", type=int, default=100)
    _api_options(p_items)
    p_compare = jobs_sub.add_parser("compare", help="jobs side by side")
    p_compare.add_argument("job_ids", nargs="+")
    _api_options(p_compare)

    p_budgets = sub.add_parser("budgets", help="budgets through the API")
    budgets_sub = p_budgets.add_subparsers(dest="budgets_command", required=True)
    _api_options(budgets_sub.add_parser("ls", help="budgets and their spend"))
    p_set = budgets_sub.add_parser("set", help="create or replace a budget")
    p_set.add_argument("budget_id")
    p_set.add_argument(
        "definition",
        help='JSON, e.g. \'{"scope": {"tag": {"team": "nlp"}}, '
        '"amount_usd": "500", "period": "month"}\'',
    )
    _api_options(p_set)
    p_rm = budgets_sub.add_parser("rm", help="delete a budget")
    p_rm.add_argument("budget_id")
    _api_options(p_rm)

    p_prices = sub.add_parser("prices", help="the rate the ledger would use")
    p_prices.add_argument("instance_type")
    p_prices.add_argument("--region", default="us-east-1")
    _api_options(p_prices)

    p_config = sub.add_parser("config", help="the CDK configuration of the stack")
    config_sub = p_config.add_subparsers(dest="config_command", required=True)
    p_show_config = config_sub.add_parser(
        "show", help="the effective configuration, with where each value came from"
    )
    p_show_config.add_argument(
        "-c",
        "--context",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a context value as given to cdk (repeatable), e.g. -c ledger.reconcile.enabled=true",
    )
    p_show_config.add_argument(
        "--cdk-json", type=Path, default=Path("cdk.json"), help="default: ./cdk.json"
    )
    p_show_config.add_argument("--json", action="store_true", help="as a JSON document")
    p_show_config.set_defaults(func=cmd_config_show)

    p_dlq = sub.add_parser("dlq", help="dead-letter queues of the deployed stack")
    dlq_sub = p_dlq.add_subparsers(dest="dlq_command", required=True)
    p_redrive = dlq_sub.add_parser("redrive", help="invoke parked events again, then delete")
    p_redrive.add_argument("--queue-url", required=True)
    p_redrive.add_argument("--function-name", required=True)
    p_redrive.add_argument("--limit", type=int, default=1000)
    p_redrive.set_defaults(func=cmd_redrive)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
