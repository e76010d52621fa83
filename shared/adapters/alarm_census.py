"""How many of the tracker's alarms (by their name prefix) exist in one account and
region: the health record's "alarms in place" (one DescribeAlarms call per 100)."""

from __future__ import annotations

from shared.adapters.accounts import ClientFactory


def alarms_in_place(clients: ClientFactory, account: str, region: str, prefix: str) -> int:
    cloudwatch = clients.client_for("cloudwatch", account, region)
    pages = cloudwatch.get_paginator("describe_alarms").paginate(
        AlarmNamePrefix=prefix, AlarmTypes=["MetricAlarm"]
    )
    return sum(len(page.get("MetricAlarms", [])) for page in pages)
