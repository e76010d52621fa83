"""``costtracker``: replay scenarios, run the demo, read job costs from the API.

Every mistake is one line on stderr naming the problem and what to do, with a non-zero
exit (2: bad input, 1: a failure, 130: interrupted, 141: the reader of stdout went
away), never a traceback; ``--debug`` shows the traceback.

Each subcommand is one ``add_*`` function (its options) and one ``cmd_*`` function (what
it does); ``build_parser`` lists them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from datetime import date
from pathlib import Path
from typing import Any, NoReturn

from costtracker.errors import CliError

EXIT_BROKEN_PIPE = 141  # as a shell reports a tool killed by SIGPIPE


class Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


# --- argument types: each refuses bad input with one line -----------------------------


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a day: give YYYY-MM-DD") from None


def _positive(limit: int) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not 1 <= value <= limit:
            raise argparse.ArgumentTypeError(f"give a number from 1 to {limit}")
        return value

    return parse


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError("give a port from 0 (any free one) to 65535")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or not 0 <= value <= 7 * 86400:
        raise argparse.ArgumentTypeError("give a number of seconds from 0 to 604800 (7 days)")
    return value


def _fraction(text: str) -> str:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or not 0 <= value < 1:
        raise argparse.ArgumentTypeError("give a fraction from 0 to below 1, e.g. 0.2")
    return text


def _job_id(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("a job id is not empty: list jobs with `jobs ls`")
    return text


# --- replay, demo, summaries backfill, dlq redrive -------------------------------------


def _job_table(document: dict[str, Any]) -> str:
    from costtracker.render import job_table

    return job_table(document)


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
    print(_job_table(document))
    print(alert_list(document))
    return 0


def _replay_or_explain(run: Any, path: Path) -> Any:
    """A configuration the scenario makes invalid is a one-line error, not a traceback."""
    from pydantic import ValidationError

    from costtracker.errors import validation_summary

    try:
        return run()
    except ValidationError as exc:
        raise CliError(validation_summary(exc, f"{path}: invalid configuration: ")) from exc


def add_replay(sub: Any) -> None:
    p = sub.add_parser("replay", help="replay a scenario through the handlers")
    p.add_argument("scenario", type=Path)
    p.add_argument("--json", action="store_true", help="print the JSON document (SPEC)")
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
    p.add_argument("--chaos-delay", type=_seconds, default=300.0, metavar="SECONDS")
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
    p.set_defaults(func=cmd_replay)


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


def add_demo(sub: Any) -> None:
    p = sub.add_parser(
        "demo", help="replay the bundled example and serve the job-cost API and the dashboard"
    )
    p.add_argument("--no-serve", action="store_true")
    p.add_argument("--host", default="127.0.0.1", help="a loopback address (default 127.0.0.1)")
    p.add_argument("--port", type=_port, default=8080)
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
        help="a JSON list of budgets (as PUT /budgets/{id} takes them) to set after the replay",
    )
    p.add_argument("--verbose", action="store_true")
    p.set_defaults(func=cmd_demo)


def cmd_dashboard(args: argparse.Namespace) -> int:
    from costtracker.dashboard.server import run_dashboard

    return run_dashboard(args.endpoint, args.host, args.port)


def add_dashboard(sub: Any) -> None:
    p = sub.add_parser(
        "dashboard", help="the dashboard on the loopback for a deployed API (calls signed SigV4)"
    )
    p.add_argument("--endpoint", required=True, help="the deployed API's URL (with its stage)")
    p.add_argument("--host", default="127.0.0.1", help="a loopback address (default 127.0.0.1)")
    p.add_argument("--port", type=_port, default=8080)
    p.set_defaults(func=cmd_dashboard)


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
    from shared import runtime
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
    _require_region()
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
            runtime.notifier() if args.notify else None,
            runtime.current_settings().config.summary.focus_version,
        )
        progress.advance()
        print(f"{day}: {summary['total_usd']} USD")
        day += timedelta(days=1)
    progress.close()
    return 0


def _require_region(explicit: str | None = None, hint_url: str = "") -> str:
    """The AWS region to use, or a one-line error (botocore would raise NoRegionError)."""
    import boto3

    region = explicit or boto3.session.Session().region_name
    if not region and hint_url:  # https://sqs.eu-west-1.amazonaws.com/...
        parts = (hint_url.split("//", 1)[-1].split("/", 1)[0]).split(".")
        region = parts[1] if len(parts) > 2 and parts[0] == "sqs" else None
    if not region:
        raise CliError("no AWS region: pass --region, or set AWS_REGION (or a profile's region)")
    return region


def add_summaries(sub: Any) -> None:
    p = sub.add_parser("summaries", help="daily summaries")
    summaries_sub = p.add_subparsers(dest="summaries_command", required=True)
    backfill = summaries_sub.add_parser(
        "backfill", help="re-run days on the deployed stack (same outputs, overwritten)"
    )
    backfill.add_argument("--from", dest="from_", type=_day, required=True)
    backfill.add_argument("--to", type=_day, required=True)
    backfill.add_argument("--notify", action="store_true", help="also message finance")
    backfill.set_defaults(func=cmd_backfill)

    show = summaries_sub.add_parser("show", help="one stored daily summary, readable")
    show.add_argument("day", type=_day)
    _api_options(show, cmd_summaries_show)


def cmd_redrive(args: argparse.Namespace) -> int:
    import boto3

    from costtracker.dlq import lambda_invoker, redrive

    region = _require_region(args.region, args.queue_url)
    result = redrive(
        boto3.client("sqs", region_name=region),
        args.queue_url,
        lambda_invoker(boto3.client("lambda", region_name=region), args.function_name),
        args.limit,
    )
    print(json.dumps({"redriven": result.redriven, "failed": result.failed}, indent=2))
    return 1 if result.failed else 0


def add_dlq(sub: Any) -> None:
    p = sub.add_parser("dlq", help="dead-letter queues of the deployed stack")
    dlq_sub = p.add_subparsers(dest="dlq_command", required=True)
    redrive = dlq_sub.add_parser("redrive", help="invoke parked events again, then delete")
    redrive.add_argument("--queue-url", required=True)
    redrive.add_argument("--function-name", required=True)
    redrive.add_argument("--region", default=None, help="default: the queue URL's, AWS_REGION")
    redrive.add_argument("--limit", type=_positive(100_000), default=1000)
    redrive.set_defaults(func=cmd_redrive)


# --- the API commands ------------------------------------------------------------------


def _api(args: argparse.Namespace) -> Any:
    from costtracker.client import ApiClient

    return ApiClient(args.endpoint)


def _emit(args: argparse.Namespace, body: Any, human: Any) -> int:
    if args.json:
        json.dump(body, sys.stdout, indent=2, sort_keys=True, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print(human(body))
    return 0


def _api_options(parser: argparse.ArgumentParser, func: Any) -> None:
    parser.add_argument(
        "--endpoint",
        default=None,
        help="the API's URL (default $COSTTRACKER_ENDPOINT or the local demo's)",
    )
    parser.add_argument("--json", action="store_true", help="the API's JSON, keys sorted")
    parser.set_defaults(func=func)


def cmd_jobs_ls(args: argparse.Namespace) -> int:
    from costtracker import render

    query = {
        "project": args.project,
        "team": args.team,
        "owner": args.owner,
        "status": args.status,
        "from": args.from_ and args.from_.isoformat(),
        "to": args.to and args.to.isoformat(),
        "sort": args.sort,
        "limit": args.limit,
        "next_token": args.next_token,
    }
    return _emit(args, _api(args).request("GET", "/jobs", query), render.job_list)


def cmd_jobs_show(args: argparse.Namespace) -> int:
    from costtracker import render

    client = _api(args)
    return _emit(args, client.request("GET", client.path("jobs", args.job_id)), render.job_show)


def cmd_jobs_items(args: argparse.Namespace) -> int:
    from costtracker import render

    client = _api(args)
    path = client.path("jobs", args.job_id, "items")
    body = client.request("GET", path, {"limit": args.limit, "next_token": args.next_token})
    if args.all:
        items = list(body["items"])
        while body.get("next_token"):
            body = client.request(
                "GET", path, {"limit": args.limit, "next_token": body["next_token"]}
            )
            items += body["items"]
        body = {**body, "items": items, "next_token": None}
    return _emit(args, body, render.items)


def cmd_jobs_compare(args: argparse.Namespace) -> int:
    from costtracker import render

    if any("," in job_id for job_id in args.job_ids):
        raise CliError("a job id with a comma cannot be compared (the API takes a list)")
    body = _api(args).request("GET", "/compare", {"jobs": ",".join(args.job_ids)})
    return _emit(args, body, render.compare)


def cmd_jobs_timeline(args: argparse.Namespace) -> int:
    from costtracker import render

    client = _api(args)
    body = client.request(
        "GET", client.path("jobs", args.job_id, "timeline"), {"points": args.points}
    )
    return _emit(args, body, render.timeline)


def cmd_jobs_estimate(args: argparse.Namespace) -> int:
    from costtracker import render

    client = _api(args)
    body = client.request(
        "GET",
        client.path("jobs", args.job_id, "estimate"),
        {"target_steps": args.target_steps, "utilization_drop": args.utilization_drop},
    )
    return _emit(args, body, render.estimate)


def add_jobs(sub: Any) -> None:
    p = sub.add_parser("jobs", help="job costs from the API")
    jobs_sub = p.add_subparsers(dest="jobs_command", required=True)

    ls = jobs_sub.add_parser("ls", help="jobs active in a date range (default: the last 7 days)")
    for option in ("--project", "--team", "--owner"):
        ls.add_argument(option, help=f"only jobs with this {option[2:]} tag")
    ls.add_argument("--status", choices=["running", "stopped", "interrupted", "complete"])
    ls.add_argument("--from", dest="from_", type=_day, metavar="DAY")
    ls.add_argument("--to", type=_day, metavar="DAY")
    ls.add_argument("--sort", choices=["cost", "start"], default="cost")
    ls.add_argument("--limit", type=_positive(100), default=20)
    ls.add_argument("--next-token", help="the page after the one that printed it")
    _api_options(ls, cmd_jobs_ls)

    show = jobs_sub.add_parser("show", help="one job's cost breakdown, rates and sources")
    show.add_argument("job_id", type=_job_id)
    _api_options(show, cmd_jobs_show)

    items = jobs_sub.add_parser("items", help="a job's segments, checkpoints, idle periods")
    items.add_argument("job_id", type=_job_id)
    items.add_argument("--limit", type=_positive(500), default=100, help="items per page")
    items.add_argument("--next-token", help="the page after the one that printed it")
    items.add_argument("--all", action="store_true", help="every page")
    _api_options(items, cmd_jobs_items)

    compare = jobs_sub.add_parser("compare", help="2 to 5 jobs side by side, with notes")
    compare.add_argument("job_ids", nargs="+", type=_job_id, metavar="JOB")
    _api_options(compare, cmd_jobs_compare)

    timeline = jobs_sub.add_parser("timeline", help="a job's cumulative cost over time")
    timeline.add_argument("job_id", type=_job_id)
    timeline.add_argument("--points", type=_positive(500), default=12)
    _api_options(timeline, cmd_jobs_timeline)

    estimate = jobs_sub.add_parser("estimate", help="the cost to reach a step, as a range")
    estimate.add_argument("job_id", type=_job_id)
    estimate.add_argument("--target-steps", type=_positive(10**12), required=True)
    estimate.add_argument(
        "--utilization-drop", type=_fraction, default="0.2", help="for the high end"
    )
    _api_options(estimate, cmd_jobs_estimate)


def _budget_definition(text: str) -> dict[str, Any]:
    try:
        definition = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(
            f"the budget definition is not valid JSON ({exc.msg} at column {exc.colno}); "
            'e.g. \'{"scope": {"tag": {"team": "nlp"}}, "amount_usd": "500", "period": "month"}\''
        ) from exc
    if not isinstance(definition, dict):
        raise CliError(
            'the budget definition is a JSON object, e.g. \'{"amount_usd": "500", ...}\''
        )
    return definition


def cmd_budgets_ls(args: argparse.Namespace) -> int:
    from costtracker import render

    return _emit(args, _api(args).request("GET", "/budgets"), render.budgets)


def cmd_budgets_set(args: argparse.Namespace) -> int:
    definition = _budget_definition(args.definition)
    client = _api(args)
    body = client.request("PUT", client.path("budgets", args.budget_id), body=definition)
    return _emit(args, body, lambda b: f"budget {b['budget_id']} set")


def cmd_budgets_rm(args: argparse.Namespace) -> int:
    client = _api(args)
    body = client.request("DELETE", client.path("budgets", args.budget_id))
    return _emit(args, body, lambda b: f"budget {b['budget_id']} deleted")


def cmd_budgets_history(args: argparse.Namespace) -> int:
    from costtracker import render

    client = _api(args)
    body = client.request("GET", client.path("budgets", args.budget_id, "history"))
    return _emit(args, body, render.budget_history)


def add_budgets(sub: Any) -> None:
    p = sub.add_parser("budgets", help="budgets through the API")
    budgets_sub = p.add_subparsers(dest="budgets_command", required=True)
    _api_options(budgets_sub.add_parser("ls", help="budgets and their spend"), cmd_budgets_ls)
    put = budgets_sub.add_parser("set", help="create or replace a budget")
    put.add_argument("budget_id")
    put.add_argument(
        "definition",
        help='JSON, e.g. \'{"scope": {"tag": {"team": "nlp"}}, '
        '"amount_usd": "500", "period": "month"}\'',
    )
    _api_options(put, cmd_budgets_set)
    rm = budgets_sub.add_parser("rm", help="delete a budget")
    rm.add_argument("budget_id")
    _api_options(rm, cmd_budgets_rm)
    history = budgets_sub.add_parser("history", help="who changed a budget, when, and how")
    history.add_argument("budget_id")
    _api_options(history, cmd_budgets_history)


def cmd_summaries_show(args: argparse.Namespace) -> int:
    from costtracker import render

    client = _api(args)
    body = client.request("GET", client.path("summaries", args.day.isoformat()))
    return _emit(args, body, render.summary)


def cmd_prices(args: argparse.Namespace) -> int:
    from costtracker import render

    query = {"instance_type": args.instance_type, "region": args.region}
    return _emit(args, _api(args).request("GET", "/prices", query), render.price)


def add_prices(sub: Any) -> None:
    p = sub.add_parser("prices", help="the rate the ledger would use")
    p.add_argument("instance_type")
    p.add_argument("--region", default="us-east-1")
    _api_options(p, cmd_prices)


# --- the stack's configuration ----------------------------------------------------------


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
    from cdk.settings import SettingsError, effective_settings, settings_with_sources

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


def add_config(sub: Any) -> None:
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


# --- the parser and the one place errors are reported ----------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="costtracker", description=__doc__.split("\n\n")[0])
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (
        add_replay,
        add_demo,
        add_dashboard,
        add_summaries,
        add_jobs,
        add_budgets,
        add_prices,
        add_config,
        add_dlq,
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
