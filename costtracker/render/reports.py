"""Ledger-wide views: a daily summary, budgets and their history, an instance price."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from costtracker.render.text import priced_word, rate, table, total, usd
from shared.domain.tags import NO_TAG


def summary(body: dict[str, Any]) -> str:
    """A stored daily summary: the figures of its message, each tag key's values with
    ``(none)`` (spend without the key) last, and the instances missing required tags."""
    zone = body.get("timezone") or "UTC"
    lines = [
        f"Daily summary {body['date']} ({zone}): {total(body, body['total_usd'])}, "
        f"{priced_word(body)}, {'estimated' if body.get('estimated', True) else 'confirmed'}",
        f"  instances {usd(body.get('instance_usd'))}, EBS {usd(body.get('ebs_usd'))}, "
        f"checkpoint storage {usd(body.get('checkpoint_storage_usd'))}",
        f"  waste     rerun {usd(body.get('wasted_rerun_usd'))}, idle "
        f"{usd(body.get('wasted_idle_usd'))} (parts of the instance cost)",
        f"  untagged  {usd(body.get('untagged_usd'))}; without grouping tags "
        f"{usd(body.get('missing_grouping_tags_usd'))}",
    ]
    if body.get("trailing_mean_usd") is not None:
        days = body.get("trailing_mean_days")
        lines.append(
            f"  daily mean of the previous {days} day{'' if days == 1 else 's'}: "
            f"{usd(body['trailing_mean_usd'])}"
        )
    by_job = body.get("by_job") or {}
    if by_job:
        rows = [("JOB", "SPEND")] + [
            (job, usd(value))
            for job, value in sorted(by_job.items(), key=lambda kv: -Decimal(kv[1]))
        ]
        lines += ["", table(rows, right=(1,))]
    for key, values in sorted((body.get("by_tag") or {}).items()):
        named = sorted(
            ((v, x) for v, x in values.items() if v != NO_TAG), key=lambda kv: -Decimal(kv[1])
        )
        rows = [(key.upper(), "SPEND")] + [(value, usd(amount)) for value, amount in named]
        rows.append((NO_TAG, usd(values.get(NO_TAG, "0"))))
        lines += ["", table(rows, right=(1,))]
    compliance = body.get("tag_compliance") or []
    if compliance:
        rows = [("INSTANCE", "JOB", "MISSING REQUIRED TAGS")] + [
            (c["instance_id"], c["job_id"], ", ".join(c["missing"])) for c in compliance[:20]
        ]
        more = (body.get("counts") or {}).get("tag_compliance", len(compliance)) - 20
        lines += ["", table(rows)] + ([f"and {more} more (add --json)"] if more > 0 else [])
    return "\n".join(lines)


def budgets(body: dict[str, Any]) -> str:
    """Each budget's spend and its one forecast: the central projection, its range, and
    the 100 % crossing of that same projection (worded as the alerts word it)."""
    rows = [("BUDGET", "PERIOD", "SPEND", "AMOUNT", "USED", "FORECAST", "SOURCE")]
    lines: list[str] = []
    notes: list[str] = []
    for x in body["budgets"]:
        forecast = x.get("forecast") or {}
        rows.append(
            (
                x["budget_id"],
                x["period"],
                usd(x["spend_usd"]),
                usd(x["amount_usd"]),
                f"{x['percent']} %",
                usd(x["projected_total_usd"]),
                x.get("source", "-"),
            )
        )
        lines.append(
            f"{x['budget_id']}: forecast {usd(x['projected_total_usd'])} (range "
            f"{usd(x.get('projected_low_usd'))} to {usd(x.get('projected_high_usd'))}); "
            f"100 % {crossing_word(forecast, 100)}"
        )
        for note in (forecast.get("range"), forecast.get("assumption")):
            if note and note not in notes:
                notes.append(note)
    if len(rows) == 1:
        return "no budgets (set one with: costtracker budgets set ID '{...}')"
    out = [table(rows, right=(2, 3, 4, 5)), "", *lines]
    out += [f"Forecast range: {notes[0]}."] if notes else []
    out += [f"Assumed: {note}." for note in notes[1:]]
    return "\n".join(out)


def crossing_word(forecast: dict[str, Any], threshold: int) -> str:
    """A threshold's moment in the forecast, in the alerts' words."""
    crossing = next((c for c in forecast.get("crossings", []) if c["threshold"] == threshold), None)
    if crossing is None or crossing["state"] == "not_projected":
        return "not projected in the period"
    if crossing["state"] == "crossed":
        return "already crossed"
    if crossing["state"] == "possible":
        return f"not projected; the range's high end crosses it at {crossing['high_at']}"
    return f"projected at {crossing['at']}"


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
