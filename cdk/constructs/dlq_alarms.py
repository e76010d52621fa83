"""An alarm per dead-letter queue: any message visible notifies the admin topic."""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from cdk.constructs.lambda_factory import _pascal


class DeadLetterAlarms(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        queues: Mapping[str, sqs.IQueue],
        topic: sns.ITopic,
    ) -> None:
        super().__init__(scope, construct_id)
        self.alarms: dict[str, cloudwatch.Alarm] = {}
        for name, queue in queues.items():
            alarm = queue.metric_approximate_number_of_messages_visible(
                period=Duration.minutes(5), statistic=cloudwatch.Stats.MAXIMUM
            ).create_alarm(
                self,
                _pascal(name),
                alarm_description=f"costtracker {name}: events or invocations were dead-lettered",
                threshold=0,
                comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
                evaluation_periods=1,
                treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            )
            alarm.add_alarm_action(actions.SnsAction(topic))
            self.alarms[name] = alarm
