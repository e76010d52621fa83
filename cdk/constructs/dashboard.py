"""A CloudWatch dashboard for the tracker itself (events, errors, dead letters, schedule
lag, alerts) and for spend (daily cost by project and team, from EMF metrics)."""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from shared.telemetry import NAMESPACE


def _ours(name: str, statistic: str = "Sum") -> cloudwatch.Metric:
    return cloudwatch.Metric(
        namespace=NAMESPACE,
        metric_name=name,
        dimensions_map={"service": "costtracker"},
        statistic=statistic,
        period=Duration.minutes(5),
    )


def _spend_by(tag: str) -> cloudwatch.GraphWidget:
    """Daily spend per value of a tag (the DailySpendUSD metrics of the daily summary)."""
    search = f"SEARCH('{{{NAMESPACE},{tag}}} MetricName=\"DailySpendUSD\"', 'Maximum', 86400)"
    return cloudwatch.GraphWidget(
        title=f"Estimated daily spend by {tag} (USD)",
        left=[cloudwatch.MathExpression(expression=search, label="", period=Duration.days(1))],
        width=12,
    )


class TrackerDashboard(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        functions: Mapping[str, lambda_.IFunction],
        queues: Mapping[str, sqs.IQueue],
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
