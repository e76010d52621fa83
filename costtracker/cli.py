"""``costtracker``: replay scenarios and run the demo on the embedded emulator."""

from __future__ import annotations

import argparse
import json
import sys
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
    try:
        document = replay(scenario, verbose=args.verbose)
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="costtracker", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p_replay = sub.add_parser("replay", help="replay a scenario through the handlers")
    p_replay.add_argument("scenario", type=Path)
    p_replay.add_argument("--json", action="store_true", help="print the JSON document (SPEC)")
    p_replay.add_argument("--verbose", action="store_true", help="handler logs (INFO) on stderr")
    p_replay.set_defaults(func=cmd_replay)

    p_demo = sub.add_parser("demo", help="replay the bundled example and serve the job-cost API")
    p_demo.add_argument("--no-serve", action="store_true")
    p_demo.add_argument("--host", default="127.0.0.1")
    p_demo.add_argument("--port", type=int, default=8080)
    p_demo.add_argument("--scenario", type=Path, default=None, help="another scenario to show")
    p_demo.add_argument("--verbose", action="store_true")
    p_demo.set_defaults(func=cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
