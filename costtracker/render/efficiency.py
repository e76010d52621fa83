"""Efficiency views: one job's figures with its checkpoint storage over time, a team's
jobs side by side, and why spend changed (use, efficiency, price, other, to the cent)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from costtracker.render.text import fill, per_unit, status_word, table, usd


def _q(value: str | None, places: int = 2) -> str:
    return "not measured" if value is None else f"{Decimal(value):,.{places}f}"


def _share(value: str | None) -> str:
    return "not measured" if value is None else f"{Decimal(value):.1%}"


def _signed(value: str) -> str:
    number = Decimal(value)
    return ("+" if number >= 0 else "-") + usd(str(abs(number)))


def job_efficiency(body: dict[str, Any]) -> str:
    rows = [
        ("accelerator-hours", _q(body["accelerator_hours"])),
        ("effective accelerator-hours", _q(body["effective_accelerator_hours"])),
        ("utilization", _share(body["utilization"])),
        ("measured share", _share(body["utilization_measured_share"])),
        ("steps/h", _q(body["steps_per_hour"], 1)),
        ("tokens/s", _q(body["tokens_per_second"], 0)),
        ("$/accelerator-hour", per_unit(body["usd_per_accelerator_hour"])),
        ("$/1k steps", per_unit(body["cost_per_1k_steps_usd"])),
        ("$/1M tokens", per_unit(body["cost_per_million_tokens_usd"])),
        ("interruptions (retries)", str(body["interruptions"])),
        ("rerun waste", f"{usd(body['wasted_rerun_usd'])} ("
         f"{_share(body['rerun_share_of_instance_cost'])} of instance cost)"),
        ("idle waste", usd(body["wasted_idle_usd"])),
    ]  # fmt: skip
    out = [
        f"Efficiency of {body['job_id']} ({status_word(body['status'])}, "
        f"{', '.join(body['instance_types']) or 'no instances'}), as of {body['as_of']}",
        table(rows, right=(1,)),
    ]
    storage = body.get("storage_gb") or []
    if storage:
        top = max(Decimal(p["gb"]) for p in storage)
        bars = [("AT", "CHECKPOINTS (GB)", "")]
        for p in storage:
            width = int(Decimal(p["gb"]) / top * 30) if top > 0 else 0
            bars.append((p["at"], f"{Decimal(p['gb']):,.2f}", "#" * width))
        out += ["", table(bars, right=(1,))]
    else:
        out.append("checkpoint storage: no checkpoint written")
    return "\n".join(out)


def team_efficiency(body: dict[str, Any]) -> str:
    # What fits 80 columns; steps/h and rerun waste per job: ``efficiency job`` or --json.
    rows = [("JOB", "ACC-H", "EFFECTIVE", "UTIL", "TOKENS/S", "$/ACC-H", "$/1K STEPS")]
    for j in body["jobs"]:
        rows.append(
            (
                j["job_id"],
                _q(j["accelerator_hours"], 1),
                _q(j["effective_accelerator_hours"], 1),
                _share(j["utilization"]),
                _q(j["tokens_per_second"], 0),
                per_unit(j["usd_per_accelerator_hour"]),
                per_unit(j["cost_per_1k_steps_usd"]),
            )
        )
    t = body["totals"]
    more = f" and {body['more_jobs']} more" if body["more_jobs"] else ""
    lines = [
        table(rows, right=(1, 2, 3, 4, 5, 6)),
        fill(
            f"{t['jobs']} job(s){more}: "
            f"{_q(t['accelerator_hours'], 1)} accelerator-hours, "
            f"{_q(t['effective_accelerator_hours'], 1)} effective ({t['jobs_measured']} measured), "
            f"{usd(t['total_usd'])}, {per_unit(t['usd_per_accelerator_hour'])}/accelerator-hour, "
            f"{t['interruptions']} interruption(s), rerun waste {usd(t['wasted_rerun_usd'])}",
            "  ",
            "",
        ),
    ]
    lines += [fill(n, "      ", "note: ") for n in body["notes"]]
    return "\n".join(lines)


def spend_change(body: dict[str, Any]) -> str:
    c, b0, b1 = body["change"], body["before"], body["after"]
    lines = [
        f"Spend {b0['start'][:10]}..{b0['end'][:10]} {usd(b0['total_usd'])} -> "
        f"{b1['start'][:10]}..{b1['end'][:10]} {usd(b1['total_usd'])}: {_signed(c['total_usd'])}",
        f"  use {_signed(c['use_usd'])}, efficiency {_signed(c['efficiency_usd'])}, "
        f"price {_signed(c['price_usd'])}, other {_signed(c['other_usd'])}",
    ]
    rows = [("JOB", "BASIS", "ACC-H 0", "ACC-H 1", "USE", "EFFICIENCY", "PRICE", "OTHER")]
    for j in body["by_job"]:
        d = j["change"]
        cells = (
            j["job_id"], j["efficiency_basis"], _q(j["before"]["accelerator_hours"], 1),
            _q(j["after"]["accelerator_hours"], 1), _signed(d["use_usd"]),
            _signed(d["efficiency_usd"]), _signed(d["price_usd"]), _signed(d["other_usd"]),
        )  # fmt: skip
        rows.append(cells)
    lines += ["", table(rows, right=(2, 3, 4, 5, 6, 7))]
    if body["others"]["jobs"]:
        lines.append(
            f"and {body['others']['jobs']} more job(s), {_signed(body['others']['total_usd'])}"
        )
    lines += [fill(n, "      ", "note: ") for n in body["notes"]]
    return "\n".join(lines)
