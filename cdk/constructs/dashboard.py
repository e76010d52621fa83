"""A CloudWatch dashboard for the tracker itself (events, errors, dead letters, schedule
lag, alerts), for spend (daily cost by project and team), and the admins' operational
picture: accelerator-hours and utilization by team, accelerators idle now, spot
interruptions, checkpoint storage growth (EMF metrics: ``shared/adapters/telemetry.py``,
``shared/services/ops_metrics.py``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from shared.adapters.telemetry import NAMESPACE


def _ours(
    name: str,
    statistic: str = "Sum",
    period: Duration | None = None,
    label: str | None = None,
) -> cloudwatch.Metric:
    return cloudwatch.Metric(
        namespace=NAMESPACE,
        metric_name=name,
        dimensions_map={"service": "costtracker"},
        statistic=statistic,
        period=period or Duration.minutes(5),
        label=label,
    )


def _by_dimension(metric: str, dimension: str, title: str, **kwargs: Any) -> cloudwatch.GraphWidget:
    """One line per value of ``dimension`` (a daily figure: its maximum over each day)."""
    search = f"SEARCH('{{{NAMESPACE},{dimension}}} MetricName=\"{metric}\"', 'Maximum', 86400)"
    return cloudwatch.GraphWidget(
        title=title,
        left=[cloudwatch.MathExpression(expression=search, label="", period=Duration.days(1))],
        width=12,
        **kwargs,
    )


def _spend_by(tag: str) -> cloudwatch.GraphWidget:
    """Daily spend per value of a tag (the DailySpendUSD metrics of the daily summary)."""
    return _by_dimension("DailySpendUSD", tag, f"Estimated daily spend by {tag} (USD)")


OPERATIONS_NOTE = (
    "## Accelerators (admins)\n"
    "Utilization is the share of accelerator running time the tracker's own alarms did not "
    "call idle (accelerator and CPU low), per UTC day; the accelerator metric itself is not "
    "graphed here. Teams are the job's team tag: the 20 with the most accelerator-hours, "
    "the rest as `other`, untagged jobs as `untagged`. Idle counts are taken hourly."
)


def operations_widgets() -> list[cloudwatch.IWidget]:
    """Accelerator-hours and utilization by team, accelerators by condition now, spot
    interruptions and checkpoint storage."""
    hourly, daily = Duration.hours(1), Duration.days(1)
    return [
        cloudwatch.TextWidget(markdown=OPERATIONS_NOTE, width=24, height=2),
        _by_dimension("AcceleratorHours", "team", "Accelerator instance-hours by team (daily)"),
        _by_dimension(
            "AcceleratorUtilization",
            "team",
            "Accelerator utilization by team (% of running time not idle, daily)",
            left_y_axis=cloudwatch.YAxisProps(min=0, max=100, label="%", show_units=False),
        ),
        cloudwatch.GraphWidget(
            title="Running accelerators now: idle, input-bound, unmeasured (hourly)",
            left=[
                _ours("IdleAccelerators", "Maximum", hourly, "idle"),
                _ours("InputBoundAccelerators", "Maximum", hourly, "input-bound"),
                _ours("UnmeasuredAccelerators", "Maximum", hourly, "no metrics"),
            ],
            width=12,
        ),
        cloudwatch.GraphWidget(
            title="Spot interruptions (per hour)",
            left=[_ours("SpotInterruptions", "Sum", hourly, "interruption warnings")],
            width=6,
        ),
        cloudwatch.GraphWidget(
            title="Checkpoint storage (GB at each day's end)",
            left=[_ours("CheckpointStorageGB", "Maximum", daily, "stored")],
            width=6,
        ),
    ]


class TrackerDashboard(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        functions: Mapping[str, lambda_.IFunction],
        queues: Mapping[str, sqs.IQueue],
        alarms: Sequence[cloudwatch.IAlarm] = (),
    ) -> None:
        super().__init__(scope, construct_id)
        self.dashboard = cloudwatch.Dashboard(self, "Dashboard", dashboard_name="costtracker")
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Events processed / rejected / duplicates",
                left=[_ours("EventsProcessed"), _ours("EventsRejected"), _ours("EventsDuplicate")],
                width=12,
            ),
            cloudwatch.GraphWidget(
                title="Function errors",
                left=[f.metric_errors(period=Duration.minutes(5)) for f in functions.values()],
                width=12,
            ),
            cloudwatch.GraphWidget(
                title="Dead-letter queue depth",
                left=[
                    q.metric_approximate_number_of_messages_visible(
                        period=Duration.minutes(5), statistic="Maximum"
                    )
                    for q in queues.values()
                ],
                width=12,
            ),
            cloudwatch.GraphWidget(
                title="Budget tick lag (s) and alerts sent",
                left=[_ours("TickLagSeconds", "Maximum")],
                right=[_ours("AlertsSent")],
                width=12,
            ),
            _spend_by("project"),
            _spend_by("team"),
        )
        if alarms:
            self.dashboard.add_widgets(
                cloudwatch.AlarmStatusWidget(
                    title="Tracker health: dead-letter alarms", alarms=list(alarms), width=24
                )
            )
        self.dashboard.add_widgets(*operations_widgets())
