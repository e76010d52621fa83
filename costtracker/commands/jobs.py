"""``costtracker jobs``: job costs from the API (ls, show, items, compare, timeline,
estimate)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from costtracker.commands.api import api_client, api_options, emit
from costtracker.commands.parsing import (
    Subparsers,
    bounded_int,
    did_you_mean,
    fraction_text,
    iso_day,
    job_id_text,
)
from costtracker.errors import CliError

if TYPE_CHECKING:
    from costtracker.client import ApiClient


TAG_FILTERS = ("project", "team", "owner")
# ``--status`` takes the API's words and the words people read (``complete`` is shown
# "finished").
STATUSES = {"running": "running", "stopped": "stopped", "interrupted": "interrupted"}
STATUSES |= {"complete": "complete", "finished": "complete"}


def cmd_jobs_ls(args: argparse.Namespace) -> int:
    from costtracker.render.jobs import job_list

    client = api_client(args)
    query = {
        "project": args.project,
        "team": args.team,
        "owner": args.owner,
        "status": args.status and STATUSES[args.status],
        "from": args.from_ and args.from_.isoformat(),
        "to": args.to and args.to.isoformat(),
        "sort": args.sort,
        "limit": args.limit,
        "next_token": args.next_token,
    }
    body = client.request("GET", "/jobs", query)
    if not body["jobs"] and not args.json and any(query[k] for k in TAG_FILTERS):
        print(no_such_tag_value(client, query, body))
        return 0
    return emit(args, body, job_list)


def no_such_tag_value(client: ApiClient, query: dict[str, Any], body: dict[str, Any]) -> str:
    """What an empty list filtered by tag means: the values the same range does have
    (one more page of the list, without the tag filters), the closest one named."""
    from costtracker.render.jobs import job_list

    unfiltered = {k: v for k, v in query.items() if k not in TAG_FILTERS and k != "next_token"}
    jobs = client.request("GET", "/jobs", {**unfiltered, "limit": 100})["jobs"]
    span = f"{body['from']} .. {body['to']}"
    for key in TAG_FILTERS:
        wanted = query[key]
        if not wanted:
            continue
        seen = sorted({str(j["tags"][key]) for j in jobs if key in j.get("tags", {})})
        if wanted not in seen:
            listed = ", ".join(seen[:10]) or "none"
            return (
                f"no job active {span} has {key}={wanted}{did_you_mean(wanted, seen)}; "
                f"{key} values then: {listed} (tags are case-sensitive; widen --from/--to)"
            )
    return job_list(body)


def cmd_jobs_show(args: argparse.Namespace) -> int:
    from costtracker.render.jobs import job_show

    client = api_client(args)
    return emit(args, client.request("GET", client.path("jobs", args.job_id)), job_show)


def cmd_jobs_items(args: argparse.Namespace) -> int:
    from costtracker.render.jobs import items as render_items

    client = api_client(args)
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
    return emit(args, body, render_items)


def cmd_jobs_compare(args: argparse.Namespace) -> int:
    from costtracker.render.analysis import compare

    if any("," in job_id for job_id in args.job_ids):
        raise CliError("a job id with a comma cannot be compared (the API takes a list)")
    if not 2 <= len(args.job_ids) <= 5:
        raise CliError(
            f"jobs compare takes 2 to 5 job ids separated by spaces (got {len(args.job_ids)}), "
            "e.g. `costtracker jobs compare llama-trn llama-p5`"
        )
    body = api_client(args).request("GET", "/compare", {"jobs": ",".join(args.job_ids)})
    return emit(args, body, compare)


def cmd_jobs_timeline(args: argparse.Namespace) -> int:
    from costtracker.render.analysis import timeline

    client = api_client(args)
    body = client.request(
        "GET", client.path("jobs", args.job_id, "timeline"), {"points": args.points}
    )
    return emit(args, body, timeline)


def cmd_jobs_estimate(args: argparse.Namespace) -> int:
    from costtracker.render.analysis import estimate

    client = api_client(args)
    body = client.request(
        "GET",
        client.path("jobs", args.job_id, "estimate"),
        {"target_steps": args.target_steps, "utilization_drop": args.utilization_drop},
    )
    if int(body["current_step"]) >= args.target_steps:
        raise CliError(
            f"job {args.job_id} is already at step {int(body['current_step']):,}, past "
            f"--target-steps {args.target_steps:,}: give a step above {int(body['current_step']):,}"
        )
    return emit(args, body, estimate)


def add_jobs(sub: Subparsers) -> None:
    p = sub.add_parser("jobs", help="job costs from the API")
    jobs_sub = p.add_subparsers(dest="jobs_command", required=True)

    ls = jobs_sub.add_parser("ls", help="jobs active in a date range (default: the last 7 days)")
    for option in ("--project", "--team", "--owner"):
        ls.add_argument(option, help=f"only jobs with this {option[2:]} tag")
    ls.add_argument("--status", choices=list(STATUSES), help="finished is complete")
    ls.add_argument("--from", dest="from_", type=iso_day, metavar="DAY")
    ls.add_argument("--to", type=iso_day, metavar="DAY")
    ls.add_argument("--sort", choices=["cost", "start"], default="cost")
    ls.add_argument("--limit", type=bounded_int(100), default=20)
    ls.add_argument("--next-token", help="the page after the one that printed it")
    api_options(ls, cmd_jobs_ls)

    show = jobs_sub.add_parser("show", help="one job's cost breakdown, rates and sources")
    show.add_argument("job_id", type=job_id_text)
    api_options(show, cmd_jobs_show)

    items = jobs_sub.add_parser("items", help="a job's segments, checkpoints, idle periods")
    items.add_argument("job_id", type=job_id_text)
    items.add_argument("--limit", type=bounded_int(500), default=100, help="items per page")
    items.add_argument("--next-token", help="the page after the one that printed it")
    items.add_argument("--all", action="store_true", help="every page")
    api_options(items, cmd_jobs_items)

    compare = jobs_sub.add_parser("compare", help="2 to 5 jobs side by side, with notes")
    compare.add_argument("job_ids", nargs="+", type=job_id_text, metavar="JOB")
    api_options(compare, cmd_jobs_compare)

    timeline = jobs_sub.add_parser("timeline", help="a job's cumulative cost over time")
    timeline.add_argument("job_id", type=job_id_text)
    timeline.add_argument("--points", type=bounded_int(500), default=12)
    api_options(timeline, cmd_jobs_timeline)

    estimate = jobs_sub.add_parser("estimate", help="the cost to reach a step, as a range")
    estimate.add_argument("job_id", type=job_id_text)
    estimate.add_argument("--target-steps", type=bounded_int(10**12), required=True)
    estimate.add_argument(
        "--utilization-drop", type=fraction_text, default="0.2", help="for the high end"
    )
    api_options(estimate, cmd_jobs_estimate)
