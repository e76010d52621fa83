"""Every function of the app, described once: its handler, trigger (an EventBridge
pattern, a schedule, a queue, or the API), timeout and memory, grants (as data:
``shared.app.function_grants``), and the environment it needs beyond the common one. Read
by the CDK stack (``cdk/stack.py``), the replay's router (``costtracker/routing.py``) and
the tests. No CDK import here: ``cdk/iam_grants.py`` turns grants into IAM statements.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from shared.app.function_grants import (
    API_WRITE_KEYS,
    BUDGET_ACTION_GRANTS,
    COST_EXPLORER_READ_ACTIONS,
    DESCRIBE_AND_PRICE,
    FSX_READ_ACTIONS,
    INSTANCE_READ_ACTIONS,
    METRIC_READ_ACTIONS,
    PRICE_READ_ACTIONS,
    RESERVATION_READ_ACTIONS,
    TRAINING_READ_ACTIONS,
    Feature,
    Grants,
    Topic,
)
from shared.app.function_spec import Function as Function
from shared.app.triggers import EventRule, Every, Queue, Schedule, WorkQueue

# The environment every function gets (the stack fills in the values).
COMMON_ENVIRONMENT = (
    "TABLE_NAME",
    "FINANCE_TOPIC_ARN",
    "TEAM_TOPIC_ARN",
    "ADMIN_TOPIC_ARN",
    "TEAM_CHAT_TOPICS",
    "LEDGER_CONFIG",
)


_MEMBER_ROLE = ((Feature.ORGANIZATION, Grants(assumes_member_role=True)),)
# The event edge's trust check may refresh the organisation's account list.
_TRUSTING = ((Feature.ORGANIZATION, Grants(assumes_member_role=True, lists_organization=True)),)
# The stopper reads an instance's tags again just before it stops it (DescribeInstances).
_AUTO_STOP = (
    (Feature.AUTO_STOP, Grants(stops_instances=True, unscoped_reads=("ec2:DescribeInstances",))),
)
# Budget actions (stops through the stopper, launch denial) exist only while enabled.
_BUDGET_ACTIONS = ((Feature.BUDGET_ACTIONS, BUDGET_ACTION_GRANTS),)
_EC2_STATE = {"source": ["aws.ec2"], "detail-type": ["EC2 Instance State-change Notification"]}
HOUR, DAY = timedelta(hours=1), timedelta(days=1)
_TIMERS = "CROSSING_TIMER_QUEUE_URL"

# Event functions first, in a replay's delivery order; then the scheduled ones, the API.
FUNCTIONS: tuple[Function, ...] = (
    Function(
        "instance_state",
        "EC2 state changes -> job ledger",
        60,
        EventRule(_EC2_STATE),
        Grants(unscoped_reads=DESCRIBE_AND_PRICE),
        _MEMBER_ROLE,
    ),
    Function(
        "spot_interruption",
        "spot interruption / rebalance notices -> instance record",
        60,
        EventRule(
            {
                "source": ["aws.ec2"],
                "detail-type": [
                    "EC2 Spot Instance Interruption Warning",
                    "EC2 Instance Rebalance Recommendation",
                ],
            }
        ),
        Grants(unscoped_reads=DESCRIBE_AND_PRICE),
        _MEMBER_ROLE,
    ),
    Function(
        "alarm_lifecycle",
        "make / remove per-instance utilization alarms",
        60,
        EventRule(
            {
                **_EC2_STATE,
                "detail": {"state": ["running", "shutting-down", "stopped", "terminated"]},
            }
        ),
        Grants(
            ledger="read_write",  # what it puts is recorded (shared.adapters.alarm_store)
            unscoped_reads=INSTANCE_READ_ACTIONS,
            alarm_actions=(
                "cloudwatch:PutMetricAlarm",
                "cloudwatch:DeleteAlarms",
                "cloudwatch:TagResource",
            ),
        ),
        _MEMBER_ROLE,
    ),
    # Every alarm state change: the handler reads an alarm by its metric, not its name.
    Function(
        "alarm_state",
        "alarm state changes -> idle / input-bound / no-metrics alerts, auto-stop",
        60,
        EventRule({"source": ["aws.cloudwatch"], "detail-type": ["CloudWatch Alarm State Change"]}),
        Grants(unscoped_reads=DESCRIBE_AND_PRICE, publishes=(Topic.TEAM,)),
        _AUTO_STOP + _MEMBER_ROLE,
    ),
    Function(
        "training_job_state",
        "SageMaker training job state changes -> job ledger",
        60,
        EventRule(
            {"source": ["aws.sagemaker"], "detail-type": ["SageMaker Training Job State Change"]}
        ),
        Grants(training_reads=TRAINING_READ_ACTIONS),
        _MEMBER_ROLE,
    ),
    Function(
        "capacity_block",
        "Capacity Block delivered / expiration warning -> reservation record",
        60,
        EventRule(
            {
                "source": ["aws.ec2"],
                "detail-type": [
                    "Capacity Block Delivered",
                    "Capacity Block Expiration Warning",
                    "Capacity Block Reservation Delivered",
                    "Capacity Block Reservation Expiration Warning",
                ],
            }
        ),
        Grants(unscoped_reads=RESERVATION_READ_ACTIONS + PRICE_READ_ACTIONS),
        _MEMBER_ROLE,
    ),
    Function(
        "checkpoint",
        "S3 checkpoint objects -> checkpoint records",
        60,
        EventRule(
            {"source": ["aws.s3"], "detail-type": ["Object Created", "Object Deleted"]},
            checkpoint_buckets=True,
        ),
        Grants(unscoped_reads=("pricing:GetProducts",)),
        # A complete checkpoint wakes a stop waiting for it (a timer at its moment).
        environment=(_TIMERS,),
    ),
    Function(
        "fsx_event",
        "FSx for Lustre file system calls (CloudTrail) -> job ledger",
        60,
        EventRule(
            {
                "source": ["aws.fsx"],
                "detail-type": ["AWS API Call via CloudTrail"],
                "detail": {
                    "eventSource": ["fsx.amazonaws.com"],
                    "eventName": ["CreateFileSystem", "UpdateFileSystem", "DeleteFileSystem"],
                },
            }
        ),
        Grants(),
    ),
    Function(
        "day_boundary",
        "mark running jobs active on the new finance day",
        300,
        Every(DAY, description="mark running jobs active on the new finance day", finance_day=True),
        Grants(),
    ),
    Function(
        "price_backfill",
        "price unpriced segments, alert on missing prices",
        300,
        Every(
            HOUR,
            timedelta(minutes=5),
            "price unpriced segments; alert admins of missing prices",
        ),
        Grants(unscoped_reads=PRICE_READ_ACTIONS, publishes=(Topic.ADMIN,)),
    ),
    Function(
        "metric_read",
        "read each running instance's last hour of accelerator utilization",
        300,
        Every(
            HOUR,
            timedelta(minutes=20),
            "read each running instance's last closed hour of accelerator utilization",
        ),
        Grants(unscoped_reads=METRIC_READ_ACTIONS),
        _MEMBER_ROLE,
    ),
    Function(
        "budget_tick",
        "evaluate budgets every minute; forecasts and anomalies",
        55,
        Every(
            timedelta(minutes=1),
            description="budgets: alert within a minute of a threshold crossing; forecasts",
        ),
        # The re-send path delivers every pending alert, whatever its audience, and the
        # admins' delivery_failed alerts.
        Grants(publishes=(Topic.FINANCE, Topic.TEAM, Topic.ADMIN)),
        _BUDGET_ACTIONS + _MEMBER_ROLE,
        environment=(_TIMERS,),
    ),
    Function(
        "budget_timer",
        "one budget evaluated at its predicted crossing (alerts within seconds)",
        55,
        Queue("crossing timers (SQS, delayed to the second)", "budget_tick", _TIMERS),
        Grants(publishes=(Topic.FINANCE, Topic.TEAM, Topic.ADMIN)),
        _BUDGET_ACTIONS + _MEMBER_ROLE,
        environment=(_TIMERS,),
    ),
    Function(
        "alarm_sweep",
        "delete retired and orphan alarms, re-consider auto-stop",
        300,
        Every(
            HOUR,
            timedelta(minutes=35),
            "delete retired and orphan utilization alarms; re-consider auto-stop",
        ),
        Grants(
            # Put: an alarm its delete removed just after a restart put it goes back.
            alarm_actions=(
                "cloudwatch:DescribeAlarms",
                "cloudwatch:DeleteAlarms",
                "cloudwatch:PutMetricAlarm",
                "cloudwatch:TagResource",
            )
        ),
        _AUTO_STOP + _MEMBER_ROLE,
    ),
    Function(
        "daily_summary",
        "the previous finance day's tagged summary and FOCUS export",
        300,
        Every(
            DAY,
            description="the previous finance day's tagged summary and FOCUS export",
            at_summary_time=True,
            finance_day=True,
        ),
        # It also reads the day's hours of accelerator utilization that were not closed.
        Grants(publishes=(Topic.FINANCE,), reports_write=True, unscoped_reads=METRIC_READ_ACTIONS),
        _MEMBER_ROLE,
        environment=("REPORT_BUCKET",),
        uses_pyarrow=True,  # writes the FOCUS Parquet files
    ),
    Function(
        "ledger_sweep",
        "infer missed EC2 state events from DescribeInstances",
        300,
        Every(
            HOUR,
            timedelta(minutes=50),
            "infer missed EC2 state events from DescribeInstances",
            in_replay=False,
        ),
        Grants(unscoped_reads=DESCRIBE_AND_PRICE, sends_sweep_units=True),
        _TRUSTING,
        environment=("SWEEP_QUEUE_URL",),
    ),
    Function(
        "sweep_worker",
        "one sweep unit: an account x region x DescribeInstances page",
        300,
        WorkQueue(),
        Grants(
            unscoped_reads=DESCRIBE_AND_PRICE,
            sends_sweep_units=True,
            alarm_actions=("cloudwatch:DescribeAlarms",),
        ),
        _TRUSTING,
        environment=("SWEEP_QUEUE_URL",),
    ),
    Function(
        "reservation_refresh",
        "refresh capacity reservations daily; alert admins of underused ones",
        300,
        Every(
            DAY,
            timedelta(minutes=20),
            "refresh capacity reservations; alert admins of underused ones",
        ),
        Grants(
            unscoped_reads=RESERVATION_READ_ACTIONS + PRICE_READ_ACTIONS, publishes=(Topic.ADMIN,)
        ),
        _MEMBER_ROLE,
    ),
    Function(
        "fsx_refresh",
        "refresh FSx for Lustre file systems daily (DescribeFileSystems)",
        300,
        Every(
            DAY,
            timedelta(minutes=25),
            "refresh FSx for Lustre file systems in their own accounts and regions",
        ),
        Grants(unscoped_reads=FSX_READ_ACTIONS),
        _MEMBER_ROLE,
    ),
    Function(
        "reconcile",
        "reconcile settled days with Cost Explorer (opt-in)",
        300,
        Every(DAY, timedelta(hours=6), "reconcile settled days with Cost Explorer (opt-in)"),
        Grants(),
        feature_grants=(
            (
                Feature.RECONCILE,
                Grants(unscoped_reads=COST_EXPLORER_READ_ACTIONS, data_exports_read=True),
            ),
        ),
        uses_pyarrow=True,  # reads the Data Exports files; builds the day's FOCUS rows
    ),
    Function(
        "job_cost_api",
        "job cost REST API",
        29,
        None,
        # Budgets, their history and actions' releases, the price cache, budget
        # recipients' subscriptions, Price List calls of its own; it detaches a released deny.
        Grants(
            ledger="read",
            ledger_put_keys=API_WRITE_KEYS,
            manages_recipients=True,
            unscoped_reads=PRICE_READ_ACTIONS,
        ),
        ((Feature.BUDGET_ACTIONS, Grants(detaches_deny_policies=True)),),
    ),
)
BY_NAME: Mapping[str, Function] = {function.name: function for function in FUNCTIONS}


def event_rules(checkpoint_buckets: tuple[str, ...] = ()) -> dict[str, dict[str, Any]]:
    """Function name -> its deployed EventBridge pattern, in delivery order; the
    checkpoint rule only sees the configured buckets when there are any."""
    rules: dict[str, dict[str, Any]] = {}
    for function in FUNCTIONS:
        if isinstance(function.trigger, EventRule):
            pattern = dict(function.trigger.pattern)
            if function.trigger.checkpoint_buckets and checkpoint_buckets:
                pattern["detail"] = {"bucket": {"name": list(checkpoint_buckets)}}
            rules[function.name] = pattern
    return rules


def checkpoint_rule(buckets: tuple[str, ...]) -> dict[str, Any]:
    """The checkpoint rule's pattern, limited to the given buckets when there are any."""
    return event_rules(buckets)["checkpoint"]


EVENT_RULES: dict[str, dict[str, Any]] = event_rules()


def schedules(
    summary_time_utc: str = "00:15", finance_timezone: str = "UTC"
) -> tuple[Schedule, ...]:
    """The deployed schedules; those on the finance day's boundary (the day boundary, the
    daily summary at the configured time past it) run on ``finance_timezone``'s clock."""
    hour, minute = (int(part) for part in summary_time_utc.split(":"))
    summary_at = timedelta(hours=hour, minutes=minute)
    return tuple(
        Schedule(
            function.name,
            every.every,
            summary_at if every.at_summary_time else every.offset,
            every.description,
            every.in_replay,
            finance_timezone if every.finance_day else "UTC",
        )
        for function in FUNCTIONS
        if isinstance(every := function.trigger, Every)
    )


SCHEDULES: tuple[Schedule, ...] = schedules()
