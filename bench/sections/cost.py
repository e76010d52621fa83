"""Section 6 of the table: the self-cost model's monthly lines at each fleet size, the
fraction of tracked spend, record sizes and their growth over many cycles."""

from __future__ import annotations

from typing import Any

from bench.report import Report


def section_cost(r: Report, model: dict[str, Any], growth: dict[str, Any] | None) -> None:
    s = "6. Self-cost model (monthly, us-east-1 list prices, no free tier)"
    r.section(s)
    cols = [m["instances"] for m in model["models"]]
    r.out(f"{'USD per month':<28}" + "".join(f"{f'{n:,} inst.':>14}" for n in cols))
    for line in model["models"][0]["lines_usd"]:
        r.out(f"{line:<28}" + "".join(f"{m['lines_usd'][line]:>14,.4f}" for m in model["models"]))
    r.out(f"{'total':<28}" + "".join(f"{m['total_usd']:>14,.2f}" for m in model["models"]))
    r.out(
        f"{'tracked spend':<28}"
        + "".join(f"{m['tracked_spend_usd']:>14,.0f}" for m in model["models"])
    )
    r.out(f"{'invocations':<28}" + "".join(f"{m['invocations']:>14,.0f}" for m in model["models"]))
    r.out(
        f"{'WRU / RRU (millions)':<28}"
        + "".join(f"{m['wru'] / 1e6:>7.2f}/{m['rru'] / 1e6:<6.2f}" for m in model["models"])
    )
    r.out()
    r.header()
    for m in model["models"]:
        r.figure(
            s,
            f"self-cost / tracked spend, {m['instances']:,} instances",
            m["fraction_pct"],
            "%",
            "<= 0.01 %",
            m["fraction_pct"] <= 0.01,
            ",.5f",
        )
    sizes = model["record_bytes"]
    r.out(
        "record sizes (B): "
        + ", ".join(f"{k.replace('_', ' ')} {v:,.0f}" for k, v in sizes.items())
    )
    r.out(
        f"a job's partition as GET /jobs/{{id}} reads it at mid-month (4 instances, 1 checkpoint"
        f" object an hour each): {model['job_query_bytes_mid_month'] / 1e6:,.2f} MB"
    )
    if growth:
        r.out(
            "growth (one instance started and stopped N times, one checkpoint key written N times):"
        )
        for row in growth["rows"]:
            r.out(
                f"  N={row['cycles']:>5,}: instance head {row['instance_head_bytes']:>6,} B,"
                f" checkpoint head {row['checkpoint_head_bytes']:>6,} B, rollup"
                f" {row['rollup_bytes']:>5,} B, items in the job's partition"
                f" {row['items_in_partition']:,}"
            )
        last = growth["rows"][-1]
        largest = max(
            last["instance_head_bytes"], last["checkpoint_head_bytes"], last["rollup_bytes"]
        )
        r.figure(
            s,
            f"largest head or rollup after {last['cycles']:,} cycles",
            largest / 1000,
            "kB",
            "< 64 kB",
            largest < 64_000,
            ",.1f",
        )
    r.out(f"prices: {model['prices_as_of']}")
