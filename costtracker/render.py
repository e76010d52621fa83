"""Human output of the CLI: plain tables that fit an 80-column terminal."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from shared.views import cents

WIDTH = 80


def usd(value: str | None) -> str:
    return "-" if value is None else cents(Decimal(value))


def table(rows: Sequence[tuple[str, ...]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(line[:WIDTH] for line in lines)


def job_show(job: dict[str, Any]) -> str:
    cost = job["cost_usd"]
    tags = " ".join(f"{k}={v}" for k, v in job["tags"].items())
    state = "complete" if job.get("complete", True) else "INCOMPLETE (unpriced time)"
    lines = [
        f"Job {job['job_id']}",
        f"  status {job['status']}, {'estimated' if job.get('estimated') else 'confirmed'}, "
        f"{state}",
        f"  tags   {tags or '-'}",
        f"  total  {usd(cost['total'])} = instance {usd(cost['instance'])}"
        f" + EBS {usd(cost['ebs'])} + checkpoints {usd(cost['checkpoint_storage'])}",
        f"  waste  rerun {usd(cost['wasted_rerun'])}, idle {usd(cost['wasted_idle'])}"
        f" (portions of the instance cost)",
        f"  now    burning {usd(job.get('burn_rate_usd_per_hour'))}/h, "
        f"at risk since last checkpoint {usd(job.get('spend_at_risk_usd'))}",
        f"  work   {job['instance_seconds'] / 3600:.2f} instance-hours, "
        f"{job['checkpoints']} checkpoints (last step {job.get('last_checkpoint_step') or '-'}),"
        f" {job['interruptions']} interruptions",
        f"  steps  {usd(job.get('cost_per_1k_steps_usd'))} per 1k steps, "
        f"{usd(job.get('cost_per_million_tokens_usd'))} per 1M tokens",
        f"  later  {', '.join(job['unconfirmed'])}",
        f"  as of  {job['as_of']}",
    ]
    out = [line[:WIDTH] for line in lines]
    instances = job.get("instances")
    if instances:
        rows = [("INSTANCE", "TYPE", "HOURS", "COST", "RUNNING SINCE")]
        for i in instances:
            rows.append(
                (
                    i["instance_id"],
                    i["instance_type"],
                    f"{i['billed_seconds'] / 3600:.2f}",
                    usd(i["instance_usd"]),
                    i["running_since"] or "-",
                )
            )
        out += ["", table(rows)]
    return "\n".join(out)


def job_list(body: dict[str, Any]) -> str:
    rows = [("JOB", "STATUS", "TOTAL", "WASTED", "HOURS")]
    for j in body["jobs"]:
        wasted = Decimal(j["cost_usd"]["wasted_rerun"]) + Decimal(j["cost_usd"]["wasted_idle"])
        rows.append(
            (
                j["job_id"][:34],
                j["status"],
                usd(j["cost_usd"]["total"]),
                cents(wasted),
                f"{j['instance_seconds'] / 3600:.1f}",
            )
        )
    footer = f"\n{body['from']} .. {body['to']}" + (
        f"  (more: --next-token {body['next_token']})" if body.get("next_token") else ""
    )
    return table(rows) + footer


def compare(body: dict[str, Any]) -> str:
    fields = [
        ("accelerators", "accel"),
        ("instance_hours", "hours"),
        ("total_usd", "total"),
        ("cost_per_1k_steps_usd", "$/1k steps"),
        ("cost_per_million_tokens_usd", "$/1M tokens"),
        ("wasted_rerun_usd", "rerun"),
        ("wasted_idle_usd", "idle"),
        ("warmup_usd", "warm-up"),
    ]
    rows = [("", *[j["job_id"][:16] for j in body["jobs"]])]
    for key, label in fields:
        cells = []
        for j in body["jobs"]:
            value = j.get(key)
            if isinstance(value, list):
                cells.append(",".join(v.split(" ")[0] for v in value)[:16])
            elif key == "instance_hours":
                cells.append(f"{Decimal(value):.2f}")
            else:
                cells.append(usd(value))
        rows.append((label, *cells))
    notes = "\n".join(
        textwrap.fill(n, WIDTH, initial_indent="note: ", subsequent_indent="      ")
        for n in body["notes"]
    )
    return table(rows) + ("\n" + notes if notes else "")
