"""The tracker's own monthly bill at organisation scale: the cost model of
``bench/cost_model.py`` (its prices and workload assumptions) applied to the measured
organisation sweep (``bench/org_sweep.py``)."""

from __future__ import annotations

import math
from typing import Any

from bench.cost_model import PRICES, PRICES_AS_OF, WORKLOAD

SQS_PER_M = 0.40  # standard queue requests, per million (AWS list price, us-east-1)
SQS_IDLE_POLLS_PER_MONTH = 5 * 3 * 60 * 730  # Lambda's 5 pollers, 20 s long polls


def organisation_self_cost(
    *, instances: int, accounts: int, regions: int, sweep: dict[str, Any]
) -> dict[str, Any]:
    """The tracker's own monthly bill at organisation scale (bench/org_sweep.py), every
    instance a running accelerator all month (the simulation's fleet): its two alarms,
    the hourly GetMetricData read (one metric per instance-hour: modelled), the hourly
    sweep (its units' measured in-process time, scaled to a 256 MB Lambda's CPU share,
    plus an assumed round trip per AWS call), the SQS fan-out and the ledger writes the
    steady sweep measured; as a fraction of the tracked on-demand spend."""
    w, p = WORKLOAD, PRICES
    hours = w["hours_per_month"]
    units = sweep["units"] + sweep["follow_up_units"]
    calls_per_unit = sweep["calls_per_account"] * accounts / units
    scale_cpu = w["lambda_full_vcpu_mb"] / w["lambda_memory_mb"]
    unit_seconds = (
        sweep["unit_seconds_median"] * scale_cpu + calls_per_unit * w["aws_call_latency_ms"] / 1000
    )
    gb_s = unit_seconds * units * hours * w["lambda_memory_mb"] / 1024
    sqs_requests = hours * (math.ceil(units / 10) + 2 * units) + SQS_IDLE_POLLS_PER_MONTH
    items = {
        "alarms_usd": 2 * instances * p["cw_alarm_month"],
        "get_metric_data_usd": instances * hours / 1000 * p["cw_get_metric_data_per_1k_metrics"],
        "sweep_lambda_usd": gb_s * p["lambda_arm_gb_s"]
        + (units + 1) * hours / 1e6 * p["lambda_request_per_m"],
        "sweep_describe_alarms_usd": sweep["calls_by_operation"].get("DescribeAlarms", 0)
        * hours
        / 1000
        * p["cw_api_per_1k"],
        "sqs_usd": sqs_requests / 1e6 * SQS_PER_M,
        "dynamodb_writes_usd": sweep["dynamodb_items_written"] * hours / 1e6 * p["ddb_wru_per_m"],
        "dynamodb_reads_usd": units * hours / 1e6 * p["ddb_rru_per_m"],  # ~1 RRU per unit query
    }
    total = sum(items.values())
    tracked = instances * hours * w["tracked_rate_usd_per_hour"]
    return {
        "prices_as_of": PRICES_AS_OF,
        "assumptions": {
            "running_all_month": instances,
            "tracked_rate_usd_per_hour": w["tracked_rate_usd_per_hour"],
            "sweep_unit_lambda_seconds_modelled": round(unit_seconds, 4),
            "get_metric_data_metrics_per_instance_hour": 1,
            "aws_call_latency_ms": w["aws_call_latency_ms"],
            "regions": regions,
        },
        "monthly_usd": {k: round(v, 4) for k, v in items.items()},
        "total_monthly_usd": round(total, 2),
        "tracked_monthly_usd": round(tracked, 2),
        "fraction_of_tracked_spend": total / tracked,
    }
