"""Human output of the CLI: plain tables that fit an 80-column terminal (cells wrap,
no column is dropped), figures with their units, rates to their real precision.

Words people read: a job's status ``complete`` (every instance terminated) is shown as
"finished"; the JSON flag ``complete`` (every second priced) as "fully priced" or
"incomplete", with "at least $X" and the missing price named.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from shared.reports.views import cents

WIDTH = 80
STATUS_WORDS = {
    "running": "running",
    "stopped": "stopped",
    "interrupted": "interrupted",
    "complete": "finished",
}


def usd(value: str | None) -> str:
    """Money to the cent ("-" when unknown)."""
    return "-" if value is None else cents(Decimal(value))


def rate(value: str | None) -> str:
    """A price as it is (0.096 stays $0.096, 21.50 is $21.50): trailing zeros dropped,
    at least cents."""
    if value is None:
        return "-"
    exact = Decimal(value).normalize()
    places = max(2, -int(exact.as_tuple().exponent))
    return f"${exact:,.{places}f}"


def per_unit(value: str | None, digits: int = 4) -> str:
    """A derived figure ($/step, $/1M tokens, $/h) to ``digits`` significant digits,
    at least cents: $0.8350, $218.9, $1,313.27."""
    if value is None:
        return "-"
    number = Decimal(value)
    if number == 0:
        return "$0.00"
    magnitude = number.adjusted()  # the exponent of the leading digit
    places = max(2, digits - 1 - magnitude)
    quantum = Decimal(1).scaleb(-places)
    return f"${number.quantize(quantum, rounding=ROUND_HALF_EVEN):,.{places}f}"


def hours(seconds: int | float | Decimal | None) -> str:
    if seconds is None:
        return "-"
    return f"{Decimal(seconds) / 3600:,.2f} h"


def status_word(status: str) -> str:
    return STATUS_WORDS.get(status, status)


def missing_prices(job: dict[str, Any]) -> list[str]:
    """The unpriced items of a job, in words: "no ec2 price for trn2.48xlarge in us-east-1"."""
    out = []
    for item in job.get("unconfirmed", []):
        if item.startswith("unpriced:"):
            _, kind, key, region = [*item.split(":", 3), "", "", ""][:4]
            out.append(f"no {kind} price for {key} in {region}")
    return out


def priced_word(job: dict[str, Any]) -> str:
    return "fully priced" if job.get("complete", True) else "incomplete"


def total(job: dict[str, Any], value: str | None = None) -> str:
    """The total, as "at least $X" when some time is unpriced."""
    figure = usd(value if value is not None else job["cost_usd"]["total"])
    return figure if job.get("complete", True) else f"at least {figure}"


def _wrap(cell: str, width: int) -> list[str]:
    if len(cell) <= width:
        return [cell]
    return textwrap.wrap(cell, width, break_long_words=True, break_on_hyphens=False) or [""]


def table(rows: Sequence[Sequence[str]], width: int = WIDTH, right: Sequence[int] = ()) -> str:
    """Columns two spaces apart; when the table is wider than ``width``, the widest
    columns are narrowed and their cells wrap onto more lines (nothing is cut)."""
    if not rows:
        return ""
    count = len(rows[0])
    widths = [max(len(str(r[i])) for r in rows) for i in range(count)]
    floor = 8
    # Narrow the widest of the later columns first: the first one names the row.
    order = [*range(1, count), 0] if count > 1 else [0]
    while sum(widths) + 2 * (count - 1) > width:
        flexible = [i for i in order if widths[i] > floor]
        if not flexible:
            break
        later = [i for i in flexible if i != 0] or flexible
        widest = max(later, key=lambda i: widths[i])
        widths[widest] -= 1
    lines = []
    for row in rows:
        cells = [_wrap(str(c), w) for c, w in zip(row, widths, strict=True)]
        for n in range(max(len(c) for c in cells)):
            parts = []
            for i, (cell, w) in enumerate(zip(cells, widths, strict=True)):
                text = cell[n] if n < len(cell) else ""
                parts.append(text.rjust(w) if i in right else text.ljust(w))
            lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def _fill(text: str, indent: str, first: str) -> str:
    return textwrap.fill(text, WIDTH, initial_indent=first, subsequent_indent=indent)


def _long(line: str, indent: int = 10) -> str:
    """A line of ``job_show`` wrapped under its label."""
    return (
        line if len(line) <= WIDTH else textwrap.fill(line, WIDTH, subsequent_indent=" " * indent)
    )


def job_table(document: dict[str, Any]) -> str:
    """The replay's (and the demo's) job table."""
    rows = [("JOB", "STATUS", "INSTANCES", "EBS", "TOTAL", "INST-H")]
    for job in document["jobs"]:
        cost = job["cost_usd"]
        rows.append(
            (
                job["job_id"],
                status_word(job["status"]),
                usd(cost["instance"]),
                usd(cost["ebs"]),
                total(job),
                f"{job['instance_seconds'] / 3600:.2f}",
            )
        )
    lines = [table(rows, right=(2, 3, 4, 5))]
    priced = all(job.get("complete", True) for job in document["jobs"])
    lines.append(
        textwrap.fill(
            f"as of {document['as_of']} (estimated from live events, not yet the bill); "
            f"INST-H: instance-hours, every instance's hours added up; "
            + ("every job fully priced" if priced else "a total marked 'at least' is incomplete"),
            WIDTH,
        )
    )
    for job in document["jobs"]:
        for missing in missing_prices(job):
            lines.append(f"{job['job_id']}: {missing} (its total is a lower bound)")
    for rejected in document.get("rejected_events", []):
        lines.append(f"rejected event {rejected['event_id']}: {rejected['error']}")
    for alert in document.get("admin_alerts", []):
        lines.append(f"admin alert: {alert['subject']}")
    return "\n".join(lines)


def _last_rate(instance: dict[str, Any]) -> dict[str, Any] | None:
    for segment in reversed(instance.get("segments", [])):
        if segment.get("rates"):
            return dict(segment["rates"][-1])
    return None


def managed_lines(job: dict[str, Any]) -> list[str]:
    """SageMaker training and reserved capacity: charges of their own, in the total."""
    cost = job["cost_usd"]
    lines = []
    if "ml_storage" in cost:
        saving = job.get("managed_spot_saving")
        spot = f"; managed spot saved {Decimal(saving) * 100:.0f} %" if saving else ""
        names = ", ".join(job.get("training_jobs", [])) or "-"
        lines.append(
            f"  sagemaker {names}: ML storage {usd(cost['ml_storage'])}, "
            f"warm pool {usd(cost['warm_pool'])} (in the total){spot}"
        )
    if "wasted_reserved" in cost:
        lines.append(
            f"  reserved unused reserved capacity {usd(cost['wasted_reserved'])} (in the total)"
        )
    for res in job.get("reservations", []):
        use = res.get("utilization")
        used = f"{Decimal(use) * 100:.0f} % used" if use is not None else "not started"
        lines.append(
            f"    {res['kind']} {res['reservation_id']}: {res['instance_count']} x "
            f"{res['instance_type']}, {used}, {rate(res.get('usd_per_instance_hour'))} per "
            f"instance-hour" + (f"; {res['forecast']}" if res.get("forecast") else "")
        )
    return lines


def job_show(job: dict[str, Any]) -> str:
    cost = job["cost_usd"]
    tags = " ".join(f"{k}={v}" for k, v in job["tags"].items())
    running = job["status"] == "running"
    wall = job.get("wall_clock_seconds")
    lines = [
        f"Job {job['job_id']}",
        f"  status  {status_word(job['status'])}; "
        f"{'estimated from live events' if job.get('estimated') else 'confirmed'}; "
        f"{priced_word(job)}",
        f"  tags    {tags or '-'}",
        f"  total   {total(job)} = instances {usd(cost['instance'])} + EBS {usd(cost['ebs'])}"
        f" + checkpoint storage {usd(cost['checkpoint_storage'])}",
    ]
    for missing in missing_prices(job):
        lines.append(f"  missing {missing}: the total is a lower bound until it is known")
    lines.append(
        f"  waste   rerun {usd(cost['wasted_rerun'])}, idle {usd(cost['wasted_idle'])}"
        " (parts of the instance cost)"
    )
    lines.extend(managed_lines(job))
    if running:
        lines.append(
            f"  now     burning {per_unit(job.get('burn_rate_usd_per_hour'))}/h; at risk since"
            f" the last checkpoint {usd(job.get('spend_at_risk_usd'))}"
        )
    time_line = f"  time    {hours(wall)} wall clock" if wall is not None else "  time   "
    lines.append(
        f"{time_line}, {job['instance_seconds'] / 3600:,.2f} instance-hours"
        f" over {len(job.get('instances', [])) or '?'} instance(s)"
    )
    lines.append(
        f"  work    {job['checkpoints']} checkpoints (last step "
        f"{job.get('last_checkpoint_step') or '-'}), {job['interruptions']} interruptions"
    )
    lines.append(
        f"  unit    {per_unit(job.get('cost_per_1k_steps_usd'))} per 1k steps, "
        f"{per_unit(job.get('cost_per_million_tokens_usd'))} per 1M tokens"
    )
    later = ", ".join(i for i in job["unconfirmed"] if not i.startswith("unpriced:"))
    lines.append(f"  later   {later or '-'} (added once the bill has them)")
    lines.append(f"  as of   {job['as_of']}")
    out = [_long(line) for line in lines]
    instances = job.get("instances")
    if instances:
        rows = [("INSTANCE", "TYPE", "INST-H", "COST", "$/h", "RATE SOURCE")]
        for i in instances:
            last = _last_rate(i)
            rows.append(
                (
                    i["instance_id"],
                    i["instance_type"],
                    f"{i['billed_seconds'] / 3600:.2f}",
                    usd(i["instance_usd"]),
                    rate(last["effective_usd_per_hour"]) if last else "unpriced",
                    f"{last['source']} {last['checked_on']}" if last else "-",
                )
            )
        out += ["", table(rows, right=(2, 3, 4))]
        listed = [
            (i["instance_id"], _last_rate(i))
            for i in instances
            if _last_rate(i)
            and (_last_rate(i) or {}).get("list_usd_per_hour")
            != (_last_rate(i) or {}).get("effective_usd_per_hour")
        ]
        for instance_id, last in listed:
            assert last is not None
            out.append(
                f"  {instance_id}: list {rate(last['list_usd_per_hour'])}/h, effective "
                f"{rate(last['effective_usd_per_hour'])}/h after discounts"
            )
    return "\n".join(out)


def job_list(body: dict[str, Any]) -> str:
    rows = [("JOB", "STATUS", "TOTAL", "WASTED", "INST-H", "PRICING")]
    for j in body["jobs"]:
        wasted = Decimal(j["cost_usd"]["wasted_rerun"]) + Decimal(j["cost_usd"]["wasted_idle"])
        rows.append(
            (
                j["job_id"],
                status_word(j["status"]),
                total(j),
                cents(wasted),
                f"{j['instance_seconds'] / 3600:.1f}",
                priced_word(j),
            )
        )
    if len(rows) == 1:
        return f"no jobs active {body['from']} .. {body['to']}"
    footer = f"\njobs active {body['from']} .. {body['to']}; INST-H: instance-hours" + (
        f"\nmore: --next-token {body['next_token']}" if body.get("next_token") else ""
    )
    return table(rows, right=(2, 3, 4)) + footer


def items(body: dict[str, Any]) -> str:
    """One line item per paragraph (time, kind, what): long S3 keys are never cut."""
    lines = []
    for i in body["items"]:
        kind = i["kind"]
        if kind == "segment":
            cost = usd(i["cost_usd"]) if i.get("cost_usd") is not None else "unpriced"
            text = (
                f"{i['instance_id']} ({i['instance_type']}): {cost} for "
                f"{hours(i['billed_seconds'])} billed"
                + (f", until {i['end']}" if i.get("end") else ", still running")
            )
        elif kind == "checkpoint":
            size = Decimal(i["size_bytes"]) / 2**30
            step = f"step {i['step']}" if i.get("step") is not None else "no step"
            text = f"{step}, {size:.2f} GiB: {i['object']}" + (
                f", deleted {i['deleted_at']}" if i.get("deleted_at") else ""
            )
        elif kind == "idle":
            text = f"{i['instance_id']} idle until {i['end'] or 'now'}"
        else:
            text = f"{i.get('instance_id', '')} {i.get('action') or ''}".strip()
        head = f"{i['at'] or '-':20}  {kind:<10}"
        lines.append(
            textwrap.fill(
                text,
                WIDTH,
                initial_indent=head + "  ",
                subsequent_indent=" " * 6,
                break_long_words=False,
                break_on_hyphens=False,
            )
        )
    if not lines:
        lines.append("no line items")
    if body.get("next_token"):
        lines.append(f"more: --next-token {body['next_token']} (or --all)")
    return "\n".join(lines)


# (key, label, how to show it) of the comparison table, in reading order.
_COMPARE: list[tuple[str, str, Callable[[Any], str]]] = [
    ("status", "status", lambda v: status_word(str(v))),
    ("accelerators", "accelerators", lambda v: ", ".join(a.split(" (")[0] for a in v)),
    ("instance_types", "instances", lambda v: ", ".join(v)),
    ("lifecycle", "pricing model", str),
    ("complete", "priced", lambda v: "fully" if v else "incomplete"),
    ("steps", "last step", lambda v: "-" if v is None else f"{v:,}"),
    ("tokens_per_step", "tokens/step", lambda v: "-" if v is None else f"{v:,}"),
    ("total_usd", "total", usd),
    ("cost_per_step_usd", "$/step", per_unit),
    ("cost_per_million_tokens_usd", "$/1M tokens", per_unit),
    ("usd_per_hour", "$/h (wall clock)", per_unit),
    ("usd_per_instance_hour", "$/instance-hour", per_unit),
    ("wall_clock_hours", "wall clock", lambda v: f"{Decimal(v):,.2f} h"),
    ("instance_hours", "instance-hours", lambda v: f"{Decimal(v):,.2f}"),
    ("utilization", "busy (not idle)", lambda v: "-" if v is None else f"{Decimal(v):.0%}"),
    ("wasted_idle_usd", "idle waste", usd),
    ("wasted_rerun_usd", "rerun waste", usd),
    ("interruptions", "interruptions", str),
]


def compare(body: dict[str, Any]) -> str:
    """One column per job, full ids; more jobs than fit are shown in further blocks."""
    jobs = body["jobs"]
    label_width = max(len(label) for _, label, _ in _COMPARE)
    columns = [[j["job_id"], *[show(j.get(key)) for key, _, show in _COMPARE]] for j in jobs]
    blocks: list[list[list[str]]] = []
    chunk: list[list[str]] = []
    used = label_width
    for column in columns:  # as many whole columns per block as fit in the width
        width = max(len(cell) for cell in column) + 2
        if chunk and used + width > WIDTH:
            blocks.append(chunk)
            chunk, used = [], label_width
        chunk.append(column)
        used += width
    if chunk:
        blocks.append(chunk)
    tables = []
    for block in blocks:
        rows = [("", *[c[0] for c in block])]
        for n, (_, label, _) in enumerate(_COMPARE, start=1):
            rows.append((label, *[c[n] for c in block]))
        tables.append(table(rows))
    notes = "\n".join(
        textwrap.fill(n, WIDTH, initial_indent="note: ", subsequent_indent="      ")
        for n in body["notes"]
    )
    return "\n\n".join(tables) + ("\n" + notes if notes else "")


def timeline(body: dict[str, Any]) -> str:
    points = body["points"]
    top = max((Decimal(p["total_usd"]) for p in points), default=Decimal(0))
    bar_width = 40
    rows = [("AT", "SPENT SO FAR", "")]
    for p in points:
        value = Decimal(p["total_usd"])
        bar = "#" * int(value / top * bar_width) if top > 0 else ""
        rows.append((p["at"], usd(p["total_usd"]), bar))
    return f"Cumulative cost of {body['job_id']}\n" + table(rows, right=(1,))


def estimate(body: dict[str, Any]) -> str:
    cost, whole, span = body["cost_usd"], body["total_at_finish_usd"], body["hours"]
    lines = [
        f"Job {body['job_id']}: step {body['current_step']:,} of {body['target_steps']:,}"
        f" ({body['remaining_steps']:,} to go)",
        f"  to finish  {usd(cost['low'])} to {usd(cost['high'])} more, "
        f"{Decimal(span['low']):,.1f} to {Decimal(span['high']):,.1f} h of wall clock",
        f"  at finish  {usd(whole['low'])} to {usd(whole['high'])} in total",
        "  assumptions:",
    ]
    lines += [_fill(a, "    ", "  - ") for a in body["assumptions"]]
    lines.append(f"  as of {body['as_of']}")
    return "\n".join(lines)


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
