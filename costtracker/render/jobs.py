"""Jobs as people read them: the replay's job table, one job's breakdown, the job list
and a job's line items."""

from __future__ import annotations

import textwrap
from decimal import Decimal
from typing import Any

from costtracker.render.text import (
    WIDTH,
    hours,
    long_line,
    missing_prices,
    per_unit,
    priced_word,
    rate,
    status_word,
    table,
    total,
    usd,
)
from shared.reports.views import cents


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
    """SageMaker training, reserved capacity and FSx for Lustre: charges of their own, in
    the total."""
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
    if "fsx" in cost:
        names = ", ".join(job.get("file_systems", [])) or "-"
        lines.append(f"  fsx {names}: FSx for Lustre storage {usd(cost['fsx'])} (in the total)")
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
    lines.append(accelerator_line(job))
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
    out = [long_line(line) for line in lines]
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


def accelerator_line(job: dict[str, Any]) -> str:
    """Accelerator-hours, $/accelerator-hour and measured utilization (rule 10), each
    "not measured" / "unknown" where it is so, never a default."""
    seconds = job.get("accelerator_seconds")
    unknown = ", ".join(job.get("accelerator_counts_unknown", []))
    if seconds is None:
        bought = f"accelerator count unknown for {unknown or '?'}"
    else:
        bought = (
            f"{seconds / 3600:,.2f} accelerator-hours at "
            f"{per_unit(job.get('usd_per_accelerator_hour'))}/accelerator-hour"
        )
    use = job.get("utilization")
    if use is None:
        measured = "utilization not measured"
    else:
        share = Decimal(job["utilization_measured_share"])
        effective = job.get("effective_accelerator_hours")
        measured = f"utilization {Decimal(use):.1%} over {share:.0%} of the time measured" + (
            f" ({Decimal(effective):,.2f} effective accelerator-hours)" if effective else ""
        )
    warmup = job.get("warmup_seconds")
    warm = "warm-up not measured" if warmup is None else f"warm-up {hours(warmup)}"
    return f"  accel   {bought}; {measured}; {warm}"


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
            if i.get("end"):
                spent = f"{cost} for {hours(i['billed_seconds'])} billed, until {i['end']}"
            else:  # open: accrued to the API's as-of moment, the minimum not yet applied
                spent = f"{cost} so far for {hours(i['billed_seconds'])}, still running"
            text = f"{i['instance_id']} ({i['instance_type']}): {spent}"
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
