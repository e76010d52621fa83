"""Ledger-wide views: a daily summary, budgets and their history, an instance price."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from costtracker.render.text import priced_word, rate, table, total, usd


def summary(body: dict[str, Any]) -> str:
    lines = [
        f"Daily summary {body['date']} (UTC): {total(body, body['total_usd'])}, "
        f"{priced_word(body)}",
        f"  instances {usd(body.get('instance_usd'))}, EBS {usd(body.get('ebs_usd'))}, "
        f"checkpoint storage {usd(body.get('checkpoint_storage_usd'))}",
        f"  waste     rerun {usd(body.get('wasted_rerun_usd'))}, idle "
        f"{usd(body.get('wasted_idle_usd'))} (parts of the instance cost)",
        f"  untagged  {usd(body.get('untagged_usd'))}; without grouping tags "
        f"{usd(body.get('missing_grouping_tags_usd'))}",
    ]
    by_job = body.get("by_job") or {}
    if by_job:
        rows = [("JOB", "SPEND")] + [
            (job, usd(value))
            for job, value in sorted(by_job.items(), key=lambda kv: -Decimal(kv[1]))
        ]
        lines += ["", table(rows, right=(1,))]
    for key, values in sorted((body.get("by_tag") or {}).items()):
        rows = [(key.upper(), "SPEND")] + [
            (value, usd(amount))
            for value, amount in sorted(values.items(), key=lambda kv: -Decimal(kv[1]))
        ]
        lines += ["", table(rows, right=(1,))]
    return "\n".join(lines)


def budgets(body: dict[str, Any]) -> str:
    rows = [("BUDGET", "PERIOD", "SPEND", "AMOUNT", "USED", "SOURCE")]
    for x in body["budgets"]:
        rows.append(
            (
                x["budget_id"],
                x["period"],
                usd(x["spend_usd"]),
                usd(x["amount_usd"]),
                f"{x['percent']} %",
                x.get("source", "-"),
            )
        )
    if len(rows) == 1:
        return "no budgets (set one with: costtracker budgets set ID '{...}')"
    return table(rows, right=(2, 3, 4))


def budget_history(body: dict[str, Any]) -> str:
    """A budget's recorded changes: when, who, what, and the amount before and after."""
    rows = [("AT", "WHO", "ACTION", "BEFORE", "AFTER")]
    for change in body["changes"]:
        before, after = change.get("before"), change.get("after")
        rows.append(
            (
                change["at"],
                change["who"],
                change["action"],
                usd(before["amount_usd"]) if before else "-",
                usd(after["amount_usd"]) if after else "-",
            )
        )
    if len(rows) == 1:
        return f"budget {body['budget_id']}: no change made through the API"
    return table(rows, right=(3, 4))


def price(body: dict[str, Any]) -> str:
    line = (
        f"{body['instance_type']} in {body['region']} ({body['platform']}): "
        f"{rate(body['list_usd_per_hour'])}/h list"
    )
    if body["effective_usd_per_hour"] != body["list_usd_per_hour"]:
        line += f", {rate(body['effective_usd_per_hour'])}/h after discounts"
    return line + f" (source {body['source']}, checked {body['checked_on']})"
