"""Section 5: the tracker's own monthly AWS bill, modelled from the measured calls.

Prices are AWS public list prices for us-east-1 as published by AWS, stated here
from documentation knowledge as of 2026-11 (not fetched at run time); no free
tier is applied (conservative). Every workload figure below is an assumption,
stated in the results; every per-operation figure comes from the replay.
"""

from __future__ import annotations

import json
import math
import statistics
from datetime import timedelta
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PRICES_AS_OF = "2026-11 (AWS public list prices, us-east-1, from documentation; not fetched)"
PRICES = {
    "lambda_request_per_m": 0.20,
    "lambda_arm_gb_s": 0.0000133334,
    "ddb_wru_per_m": 0.625,
    "ddb_rru_per_m": 0.125,
    "ddb_storage_gb_month": 0.25,
    "ddb_pitr_gb_month": 0.20,
    "apigw_rest_per_m": 3.50,
    "sns_publish_per_m": 0.50,
    "cw_alarm_month": 0.10,
    "cw_logs_ingest_gb": 0.50,
    "cw_logs_store_gb_month": 0.03,
    "cw_api_per_1k": 0.01,
    "cw_get_metric_data_per_1k_metrics": 0.01,  # GetMetricData: per metric requested
    "xray_trace_recorded_per_m": 5.00,
    "kms_key_month": 1.00,
    "eventbridge_aws_events": 0.0,
}
WORKLOAD = {
    "hours_per_month": 730,
    "state_events_per_instance_day": 4,  # pending, running, stopping, stopped
    "checkpoint_objects_per_instance_hour": 1,
    "spot_fraction": 0.25,
    "spot_notices_per_spot_instance_week": 2,
    "api_requests_per_100_instances_day": 200,  # half GET /jobs/{id}, half GET /jobs
    "instances_per_job": 4,
    "running_fraction": 0.5,
    "tracked_rate_usd_per_hour": 21.50,  # trn1.32xlarge on-demand
    "lambda_memory_mb": 256,
    "lambda_full_vcpu_mb": 1769,  # Lambda gives one vCPU at 1,769 MB, CPU scales with memory
    "aws_call_latency_ms": 10,  # assumed in-region round trip per AWS call from Lambda
    "platform_log_bytes_per_invocation": 350,  # START / END / REPORT lines (assumed)
    "log_retention_months": 3,
    "cold_starts_max_per_function_hour": 4,  # containers recycled at most every 15 min
    "record_age_days_mean": 15.2,  # a job's age at mid-month (its first month of life)
}


def template_counts() -> dict[str, Any]:
    path = ROOT / "cdk.out" / "CostTracker.template.json"
    counts = {"source": "defaults (no cdk.out template)", "alarms": 5, "kms_keys": 1}
    if path.is_file():
        resources = json.loads(path.read_text()).get("Resources", {})
        types = [r.get("Type") for r in resources.values()]
        counts = {
            "source": str(path.relative_to(ROOT)),
            "alarms": types.count("AWS::CloudWatch::Alarm"),
            "kms_keys": types.count("AWS::KMS::Key"),
        }
    return counts


def _mean(rows: list[dict[str, Any]], key: str) -> float:
    return statistics.mean(r[key] for r in rows) if rows else 0.0


def _cw(rows: list[dict[str, Any]]) -> float:
    """Mean CloudWatch API calls per invocation (GetMetricData is priced per metric
    requested instead: ``metric_reads_model``)."""
    if not rows:
        return 0.0
    mean: float = statistics.mean(
        sum(
            v
            for k, v in r["ops"].items()
            if k.startswith("cloudwatch.") and k != "cloudwatch.GetMetricData"
        )
        for r in rows
    )
    return mean


@cache
def _measured_reads() -> dict[str, Any]:
    from bench.metric_reads import measure

    return measure(10)


def metric_reads_model(n: int, days: float) -> dict[str, float]:
    """Measured utilization's GetMetricData (rule 10) for ``n`` instances, half running:
    the queries per running instance-day measured on the real read path
    (``bench/metric_reads.py``, 10 instances, a tenth stopping once a day), and one call
    per account, region and hour for up to 500 of them (one account and region here)."""
    measured = _measured_reads()
    running = n * WORKLOAD["running_fraction"]
    queries = measured["queries_per_instance_day"] * running * days
    calls = days * (24 * math.ceil(running / 500) + measured["daily_reread_calls"])
    return {
        "queries_per_running_instance_day": measured["queries_per_instance_day"],
        "calls_per_month": calls,
        "calls_per_running_instance_day": calls / days / running,
        "queries_per_month": queries,
        "usd": queries / 1000 * PRICES["cw_get_metric_data_per_1k_metrics"],
    }


def build(
    replay: dict[str, Any],
    cpu: dict[str, Any],
    cold: dict[str, Any] | None,
    alarms_per_running_instance: float,
    records: dict[str, Any] | None,
    sizes_for: tuple[int, ...] = (10, 100, 1000),
) -> dict[str, Any]:
    from shared.app.functions import SCHEDULES

    w, p = WORKLOAD, PRICES
    by_cat: dict[str, list[dict[str, Any]]] = {}
    for inv in replay["invocations"]:
        by_cat.setdefault(inv["category"], []).append(inv)
    sizes = record_sizes(replay, records)
    days = w["hours_per_month"] / 24
    scale_cpu = w["lambda_full_vcpu_mb"] / w["lambda_memory_mb"]
    replay_instances = replay["instances"]

    def event_units(cat_prefix: str) -> dict[str, float]:
        """Mean per-event figures of a family of categories, as measured in the replay
        (heads are bounded: no growth to model)."""
        rows = [r for c, rs in by_cat.items() if c.startswith(cat_prefix) for r in rs]
        if not rows:
            return {"wru": 0, "rru": 0, "calls": 0, "cpu_s": 0, "cw_calls": 0}
        return {
            "wru": _mean(rows, "wru"),
            "rru": _mean(rows, "rru"),
            "calls": _mean(rows, "total"),
            "cpu_s": _mean(rows, "cpu_s"),
            "cw_calls": _cw(rows),
        }

    def api_units(category: str, modelled_bytes: float, queries: float) -> dict[str, float]:
        rows = by_cat.get(category, [])
        measured_bytes = max(_mean(rows, "bytes_read"), 1.0)
        cpu_per_byte = _mean(rows, "cpu_s") / measured_bytes if rows else 0.0
        pages = max(queries, queries + modelled_bytes / 2**20)  # a Query page holds 1 MB
        return {
            "wru": 0.0,
            "rru": pages * 0.5 + modelled_bytes / 4096 * 0.5,
            "calls": pages,
            "cpu_s": max(_mean(rows, "cpu_s"), cpu_per_byte * modelled_bytes),
        }

    per_job = w["instances_per_job"]
    age = w["record_age_days_mean"]
    # One job's partition as a Query of it returns it at mid-month: instance heads,
    # checkpoint object heads (one per object key written so far), step markers,
    # interruption notices (few), the rollup. Sealed records are read only as needed.
    objects = per_job * 24 * w["checkpoint_objects_per_instance_hour"] * age
    job_bytes = (
        per_job * sizes["instance_head"]
        + objects * sizes["checkpoint_head"]
        + objects / per_job * sizes["step"]
        + sizes["rollup"]
    )
    models = []
    for n in sizes_for:
        jobs = max(1, n / per_job)
        state = w["state_events_per_instance_day"] * n * days
        ops: dict[str, tuple[float, dict[str, float]]] = {
            "state pending": (
                state / 4,
                {
                    "wru": 0,
                    "rru": 0,
                    "calls": 0,
                    "cpu_s": _mean(by_cat.get("state pending", []), "cpu_s"),
                },
            ),
            "state running": (state / 4, event_units("state running later")),
            "state closing": (state / 2, event_units("state closing later")),
            "ckpt created": (
                n * 24 * days * w["checkpoint_objects_per_instance_hour"],
                event_units("ckpt created"),
            ),
            "spot notice": (
                n * w["spot_fraction"] * w["spot_notices_per_spot_instance_week"] * days / 7,
                event_units("spot warning"),
            ),
            "GET /jobs/{id}": (
                n / 100 * w["api_requests_per_100_instances_day"] / 2 * days,
                api_units("GET /jobs/{id}", job_bytes, 1),
            ),
            "GET /jobs": (
                n / 100 * w["api_requests_per_100_instances_day"] / 2 * days,
                api_units(
                    "GET /jobs",
                    jobs * sizes["rollup"] + min(jobs, 20) * job_bytes,
                    1 + min(jobs, 20),
                ),
            ),
        }
        for schedule in SCHEDULES:
            runs = timedelta(days=days) / schedule.every
            rows = by_cat.get(f"scheduled {schedule.function}", [])
            k = n / replay_instances  # scheduled work scales with the instances it touches
            ops[f"scheduled {schedule.function}"] = (
                runs,
                {
                    "wru": _mean(rows, "wru") * k,
                    "rru": max(0.5, _mean(rows, "rru") * k),
                    "calls": _mean(rows, "total") * k,
                    "cpu_s": _mean(rows, "cpu_s") * k,
                    "cw_calls": _cw(rows) * k,
                },
            )
        inputs = sum(
            ops[k][0]
            for k in (
                "state pending",
                "state running",
                "state closing",
                "ckpt created",
                "spot notice",
            )
        )
        # Functions beside the known ones (e.g. alarm_lifecycle on the state rule, alarm
        # state changes): as many per input event as in the replay.
        for c, rs in by_cat.items():
            if ": " in c or c.startswith("alarm"):
                ops[c] = (inputs * len(rs) / max(replay["events"], 1), event_units(c))
        invocations = sum(count for count, _ in ops.values())
        wru = sum(count * u["wru"] for count, u in ops.values())
        rru = sum(count * u["rru"] for count, u in ops.values())
        gb_s = 0.0
        for count, u in ops.values():
            ms = math.ceil(u["cpu_s"] * scale_cpu * 1000 + u["calls"] * w["aws_call_latency_ms"])
            gb_s += count * ms / 1000 * w["lambda_memory_mb"] / 1024
        functions_invoked = len({name.split(" ")[0] for name in ops}) + 2
        cold_starts = min(
            invocations,
            functions_invoked * w["cold_starts_max_per_function_hour"] * w["hours_per_month"],
        )
        init_s = statistics.median(cold["median_s"].values()) if cold else 0.25
        gb_s += cold_starts * init_s * w["lambda_memory_mb"] / 1024
        log_bytes = invocations * (
            cpu.get("log_bytes_per_invocation", 500) + w["platform_log_bytes_per_invocation"]
        )
        # Items at month end: heads (one per instance; running ones also in the open
        # index), a sealed segment per run, an object head and a sealed version per
        # checkpoint object, a step marker per step, rollups (also in the rollups index).
        storage_gb = (
            n * sizes["instance_head"] * (1 + w["running_fraction"])
            + n * days * (state / 4 / n / days) * sizes["segment"]
            + n * 24 * days * (sizes["checkpoint_head"] + sizes["version"])
            + jobs * 24 * days * sizes["step"]
            + jobs * sizes["rollup"] * 2
        ) / 1e9
        alarms = (
            template_counts()["alarms"] + alarms_per_running_instance * n * w["running_fraction"]
        )
        api_requests = ops["GET /jobs/{id}"][0] + ops["GET /jobs"][0]
        cw_api_calls = sum(count * u.get("cw_calls", 0) for count, u in ops.values())
        metric_reads = metric_reads_model(n, days)
        lines = {
            "lambda_requests": invocations / 1e6 * p["lambda_request_per_m"],
            "lambda_duration": gb_s * p["lambda_arm_gb_s"],
            "dynamodb_writes": wru / 1e6 * p["ddb_wru_per_m"],
            "dynamodb_reads": rru / 1e6 * p["ddb_rru_per_m"],
            "dynamodb_storage_pitr": storage_gb
            * (p["ddb_storage_gb_month"] + p["ddb_pitr_gb_month"]),
            "api_gateway": api_requests / 1e6 * p["apigw_rest_per_m"],
            "cloudwatch_alarms": alarms * p["cw_alarm_month"],
            "cloudwatch_logs": log_bytes
            / 1e9
            * (p["cw_logs_ingest_gb"] + p["cw_logs_store_gb_month"] * w["log_retention_months"]),
            "cloudwatch_api": cw_api_calls / 1000 * p["cw_api_per_1k"],
            "cloudwatch_get_metric_data": metric_reads["usd"],
            "xray_traces": invocations / 1e6 * p["xray_trace_recorded_per_m"],
            "kms_keys": template_counts()["kms_keys"] * p["kms_key_month"],
            "sns": 0.0,
            "eventbridge": 0.0,
        }
        total = sum(lines.values())
        tracked = n * w["tracked_rate_usd_per_hour"] * w["hours_per_month"] * w["running_fraction"]
        models.append(
            {
                "instances": n,
                "invocations": invocations,
                "wru": wru,
                "rru": rru,
                "lambda_gb_s": gb_s,
                "log_gb": log_bytes / 1e9,
                "storage_gb": storage_gb,
                "alarms": alarms,
                "lines_usd": lines,
                "total_usd": total,
                "tracked_spend_usd": tracked,
                "fraction_pct": total / tracked * 100,
                "get_metric_data": {
                    **metric_reads,
                    "share_of_self_cost_pct": metric_reads["usd"] / total * 100,
                },
            }
        )
    return {
        "prices": PRICES,
        "prices_as_of": PRICES_AS_OF,
        "workload": WORKLOAD,
        "record_bytes": sizes,
        "job_query_bytes_mid_month": job_bytes,
        "template": template_counts(),
        "models": models,
    }


def record_sizes(replay: dict[str, Any], records: dict[str, Any] | None) -> dict[str, float]:
    """Item sizes (bytes, DynamoDB's rules): the steady-state heads from the growth run
    (an instance head stops growing once its window is full), the others as the replay
    left them in the emulator (mean by kind)."""
    stored: dict[str, list[int]] = {}
    for item in replay.get("stored_items", []):
        stored.setdefault(item.kind, []).append(item.size)

    def mean(kind: str, default: float) -> float:
        values = stored.get(kind)
        return statistics.mean(values) if values else default

    grown = (records or {}).get("rows") or [{}]
    last = grown[-1]
    return {
        "instance_head": max(
            float(last.get("instance_head_bytes", 0)), max(stored.get("instance", [8000]))
        ),
        "checkpoint_head": mean("checkpoint", float(last.get("checkpoint_head_bytes", 2600))),
        "rollup": max(float(last.get("rollup_bytes", 0)), mean("rollup", 1100)),
        "segment": mean("segment", 712),
        "version": mean("version", 330),
        "step": mean("step", 110),
        "notice": mean("notice", 300),
        "pointer": mean("pointer", 65),
    }
