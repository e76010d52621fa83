"""``costtracker accounts``: the member accounts' health through the API (admins)."""

from __future__ import annotations

import argparse
from typing import Any

from costtracker.commands.api import api_client, api_options, emit
from costtracker.commands.parsing import Subparsers


def render(body: dict[str, Any]) -> str:
    rows = [f"account list fetched: {body.get('list_fetched_at') or 'never'}"]
    for entry in body["accounts"]:
        role = {True: "yes", False: "NO", None: "not tried"}[entry["role_assumable"]]
        seen = ", ".join(f"{k} {v}" for k, v in entry["events_last_seen"].items()) or "none"
        swept = ", ".join(f"{k} {v}" for k, v in entry["last_sweep"].items()) or "never"
        alarms = ", ".join(f"{k} {v}" for k, v in entry["alarms_in_place"].items()) or "not counted"
        rows.append(
            f"{entry['account']}: role assumable {role}; events {seen}; swept {swept}; "
            f"alarms {alarms}"
        )
        if entry["last_error"]:
            rows.append(f"  last error ({entry['last_error_at']}): {entry['last_error']}")
    return "\n".join(rows)


def cmd_accounts(args: argparse.Namespace) -> int:
    client = api_client(args)
    return emit(args, client.request("GET", client.path("accounts")), render)


def add_accounts(sub: Subparsers) -> None:
    p = sub.add_parser("accounts", help="member accounts' health (admins)")
    api_options(p, cmd_accounts)
