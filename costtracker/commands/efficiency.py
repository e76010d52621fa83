"""``costtracker efficiency``: a job's or a team's accelerator-hours, utilization,
throughput and unit costs; ``costtracker change``: why spend changed between two
periods (use, efficiency, price, other, to the cent)."""

from __future__ import annotations

import argparse

from costtracker.commands.api import api_client, api_options, emit
from costtracker.commands.parsing import Subparsers, bounded_int, iso_day, job_id_text
from costtracker.errors import CliError


def cmd_efficiency_job(args: argparse.Namespace) -> int:
    from costtracker.render.efficiency import job_efficiency

    client = api_client(args)
    path = client.path("jobs", args.job_id, "efficiency")
    return emit(args, client.request("GET", path, {"points": args.points}), job_efficiency)


def cmd_efficiency_team(args: argparse.Namespace) -> int:
    from costtracker.render.efficiency import team_efficiency

    query = {
        "team": args.team,
        "project": args.project,
        "from": args.from_ and args.from_.isoformat(),
        "to": args.to and args.to.isoformat(),
    }
    body = api_client(args).request("GET", "/efficiency", query)
    return emit(args, body, team_efficiency)


def cmd_change(args: argparse.Namespace) -> int:
    from costtracker.render.efficiency import spend_change

    for n in ("0", "1"):
        first, last = getattr(args, f"from{n}"), getattr(args, f"to{n}")
        if first > last:
            raise CliError(f"--from{n} {first} is after --to{n} {last}: give the first day first")
    query = {
        "from0": args.from0.isoformat(),
        "to0": args.to0.isoformat(),
        "from1": args.from1.isoformat(),
        "to1": args.to1.isoformat(),
        "team": args.team,
        "project": args.project,
        "job_id": args.job,
    }
    return emit(args, api_client(args).request("GET", "/change", query), spend_change)


def add_efficiency(sub: Subparsers) -> None:
    p = sub.add_parser("efficiency", help="accelerator-hours, utilization, throughput")
    eff_sub = p.add_subparsers(dest="efficiency_command", required=True)
    job = eff_sub.add_parser("job", help="one job's efficiency and checkpoint storage in GB")
    job.add_argument("job_id", type=job_id_text)
    job.add_argument("--points", type=bounded_int(500), default=8, help="storage points")
    api_options(job, cmd_efficiency_job)
    team = eff_sub.add_parser("team", help="a team's (or project's) jobs side by side")
    team.add_argument("--team", help="the team tag value (a team member: theirs)")
    team.add_argument("--project", help="only jobs with this project tag")
    team.add_argument("--from", dest="from_", type=iso_day, metavar="DAY")
    team.add_argument("--to", type=iso_day, metavar="DAY")
    api_options(team, cmd_efficiency_team)

    change = sub.add_parser(
        "change", help="why spend changed between two periods: use, efficiency, price"
    )
    for name in ("from0", "to0", "from1", "to1"):
        change.add_argument(f"--{name}", type=iso_day, required=True, metavar="DAY")
    change.add_argument("--team")
    change.add_argument("--project")
    change.add_argument("--job", type=job_id_text, help="one job only")
    api_options(change, cmd_change)
