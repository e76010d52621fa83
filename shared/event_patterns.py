"""EventBridge rule patterns and schedules, defined once: the CDK stack builds its
rules from them and the local replay routes events and runs schedules by them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

# function name -> event pattern (EventBridge JSON)
EVENT_RULES: dict[str, dict[str, Any]] = {
    "instance_state": {
        "source": ["aws.ec2"],
        "detail-type": ["EC2 Instance State-change Notification"],
    },
    "spot_interruption": {
        "source": ["aws.ec2"],
        "detail-type": [
            "EC2 Spot Instance Interruption Warning",
            "EC2 Instance Rebalance Recommendation",
        ],
    },
    "alarm_lifecycle": {
        "source": ["aws.ec2"],
        "detail-type": ["EC2 Instance State-change Notification"],
        "detail": {"state": ["running", "shutting-down", "stopped", "terminated"]},
    },
    # Every alarm state change: the handler reads an alarm by its metric, not its name.
    "alarm_state": {
        "source": ["aws.cloudwatch"],
        "detail-type": ["CloudWatch Alarm State Change"],
    },
    "training_job_state": {
        "source": ["aws.sagemaker"],
        "detail-type": ["SageMaker Training Job State Change"],
    },
    "capacity_block": {
        "source": ["aws.ec2"],
        "detail-type": [
            "Capacity Block Delivered",
            "Capacity Block Expiration Warning",
            "Capacity Block Reservation Delivered",
            "Capacity Block Reservation Expiration Warning",
        ],
    },
    # The stack narrows this rule to the configured checkpoint buckets.
    "checkpoint": {
        "source": ["aws.s3"],
        "detail-type": ["Object Created", "Object Deleted"],
    },
}


def checkpoint_rule(buckets: tuple[str, ...]) -> dict[str, Any]:
    """The checkpoint rule's pattern, limited to the configured buckets when there are any."""
    pattern = dict(EVENT_RULES["checkpoint"])
    if buckets:
        pattern["detail"] = {"bucket": {"name": list(buckets)}}
    return pattern


@dataclass(frozen=True)
class Schedule:
    """Work due every ``every``, at ``offset`` past each multiple of it (UTC)."""

    function: str
    every: timedelta
    offset: timedelta = timedelta(0)
    description: str = ""
    # False for work that reads the live account (a replay's events are complete).
    in_replay: bool = True

    def cron(self) -> dict[str, str]:
        """The EventBridge cron fields (minute, hour) of this schedule."""
        minute = str(int(self.offset.total_seconds() // 60) % 60)
        if self.every == timedelta(minutes=1):
            return {"minute": "*", "hour": "*"}
        if self.every == timedelta(hours=1):
            return {"minute": minute, "hour": "*"}
        if self.every == timedelta(days=1):
            return {"minute": minute, "hour": str(int(self.offset.total_seconds() // 3600))}
        raise ValueError(f"unsupported cadence {self.every}")

    def next_after(self, after: datetime) -> datetime:
        """The first time this schedule fires after ``after``."""
        period = self.every.total_seconds()
        epoch = datetime(1970, 1, 1, tzinfo=after.tzinfo)
        k = int((after - epoch - self.offset).total_seconds() // period) + 1
        return epoch + self.offset + timedelta(seconds=k * period)

    def count_between(self, after: datetime, until: datetime) -> int:
        """How many times this schedule fires in (after, until]."""
        if until <= after:
            return 0
        period = self.every.total_seconds()
        epoch = datetime(1970, 1, 1, tzinfo=after.tzinfo)

        def index(at: datetime) -> int:
            return int((at - epoch - self.offset).total_seconds() // period)

        return max(0, index(until) - index(after))


def schedules(summary_time_utc: str = "00:15") -> tuple[Schedule, ...]:
    """The stack's schedules; the daily summary runs at the configured UTC time."""
    hour, minute = (int(part) for part in summary_time_utc.split(":"))
    return (
        Schedule(
            "day_boundary",
            timedelta(days=1),
            description="mark running jobs active on the new UTC day",
        ),
        Schedule(
            "price_backfill",
            timedelta(hours=1),
            timedelta(minutes=5),
            description="price unpriced segments; alert admins of missing prices",
        ),
        Schedule(
            "budget_tick",
            timedelta(minutes=1),
            description="budgets: alert within a minute of a threshold crossing; forecasts",
        ),
        Schedule(
            "alarm_sweep",
            timedelta(hours=1),
            timedelta(minutes=35),
            description="delete orphan utilization alarms; re-consider auto-stop",
        ),
        Schedule(
            "daily_summary",
            timedelta(days=1),
            timedelta(hours=hour, minutes=minute),
            description="the previous UTC day's tagged summary and FOCUS export",
        ),
        Schedule(
            "ledger_sweep",
            timedelta(hours=1),
            timedelta(minutes=50),
            description="infer missed EC2 state events from DescribeInstances",
            in_replay=False,
        ),
        Schedule(
            "reservation_refresh",
            timedelta(days=1),
            timedelta(minutes=20),
            description="refresh capacity reservations; alert admins of underused ones",
        ),
        Schedule(
            "reconcile",
            timedelta(days=1),
            timedelta(hours=6),
            description="reconcile settled days with Cost Explorer (opt-in)",
        ),
    )


SCHEDULES: tuple[Schedule, ...] = schedules()


def matches(pattern: dict[str, Any], event: Any) -> bool:
    """EventBridge matching for the subset our patterns use (exact values, nested keys)."""
    if not isinstance(event, dict):
        return False
    for key, expected in pattern.items():
        value = event.get(key)
        if isinstance(expected, dict):
            if not matches(expected, value):
                return False
        elif value not in expected:
            return False
    return True
