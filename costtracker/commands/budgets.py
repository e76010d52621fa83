"""``costtracker budgets``: list, set, delete budgets and read their history through the
API."""

from __future__ import annotations

import argparse
import json
from typing import Any

from costtracker.commands.api import api_client, api_options, emit
from costtracker.commands.parsing import Subparsers
from costtracker.errors import CliError


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
    from costtracker.render.reports import budgets

    return emit(args, api_client(args).request("GET", "/budgets"), budgets)


def cmd_budgets_set(args: argparse.Namespace) -> int:
    definition = _budget_definition(args.definition)
    client = api_client(args)
    body = client.request("PUT", client.path("budgets", args.budget_id), body=definition)
    return emit(args, body, lambda b: f"budget {b['budget_id']} set")


def cmd_budgets_rm(args: argparse.Namespace) -> int:
    client = api_client(args)
    body = client.request("DELETE", client.path("budgets", args.budget_id))
    return emit(args, body, lambda b: f"budget {b['budget_id']} deleted")


def cmd_budgets_history(args: argparse.Namespace) -> int:
    from costtracker.render.reports import budget_history

    client = api_client(args)
    body = client.request("GET", client.path("budgets", args.budget_id, "history"))
    return emit(args, body, budget_history)


def add_budgets(sub: Subparsers) -> None:
    p = sub.add_parser("budgets", help="budgets through the API")
    budgets_sub = p.add_subparsers(dest="budgets_command", required=True)
    api_options(budgets_sub.add_parser("ls", help="budgets and their spend"), cmd_budgets_ls)
    put = budgets_sub.add_parser("set", help="create or replace a budget")
    put.add_argument("budget_id")
    put.add_argument(
        "definition",
        help='JSON, e.g. \'{"scope": {"tag": {"team": "nlp"}}, '
        '"amount_usd": "500", "period": "month"}\'',
    )
    api_options(put, cmd_budgets_set)
    rm = budgets_sub.add_parser("rm", help="delete a budget")
    rm.add_argument("budget_id")
    api_options(rm, cmd_budgets_rm)
    history = budgets_sub.add_parser("history", help="who changed a budget, when, and how")
    history.add_argument("budget_id")
    api_options(history, cmd_budgets_history)
