"""What Cost Explorer billed per job and service on a day (GetCostAndUsage grouped by the
job tag and SERVICE, every page), and whether its figures are final."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

# Cost Explorer SERVICE values -> the part of our estimate they confirm.
SERVICE_KINDS = {
    "Amazon Elastic Compute Cloud - Compute": "instance",
    "EC2 - Other": "ebs",  # EBS volumes (and EC2-side transfer, NAT, ...)
    "Amazon Simple Storage Service": "checkpoint_storage",
    "AmazonCloudWatch": "cloudwatch",
    "AWS Data Transfer": "data_transfer",
}


@dataclass(frozen=True)
class BilledDay:
    final: bool  # Cost Explorer's own "Estimated": false
    by_job: dict[str, dict[str, Decimal]]  # job -> kind -> USD


class CostExplorerBills:
    def __init__(self, ce_client: Any) -> None:
        self._ce = ce_client

    def billed_day(self, day: date, job_tag_key: str) -> BilledDay:
        by_job: dict[str, dict[str, Decimal]] = {}
        final = True
        token = None
        while True:
            kwargs: dict[str, Any] = {
                "TimePeriod": {
                    "Start": day.isoformat(),
                    "End": (day + timedelta(days=1)).isoformat(),
                },
                "Granularity": "DAILY",
                "Metrics": ["UnblendedCost"],
                "GroupBy": [
                    {"Type": "TAG", "Key": job_tag_key},
                    {"Type": "DIMENSION", "Key": "SERVICE"},
                ],
            }
            if token:
                kwargs["NextPageToken"] = token
            response = self._ce.get_cost_and_usage(**kwargs)
            results = response.get("ResultsByTime", [])
            if not results:
                final = False
            for result in results:
                final = final and not result.get("Estimated", True)
                for group in result.get("Groups", []):
                    tag, service = group["Keys"]
                    job = tag.split("$", 1)[1] if "$" in tag else ""
                    kind = SERVICE_KINDS.get(service, "other")
                    usd = Decimal(group["Metrics"]["UnblendedCost"]["Amount"])
                    per_job = by_job.setdefault(job or "(no job tag)", {})
                    per_job[kind] = per_job.get(kind, Decimal(0)) + usd
            token = response.get("NextPageToken")
            if not token:
                return BilledDay(final, by_job)
