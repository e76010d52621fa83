"""The sweep's fan-out: the work queue of sweep units (one account x region x
DescribeInstances page each) and its dead-letter queue, feeding the worker function.

A unit that fails is delivered again after the visibility timeout, up to the trigger's
``max_receives``; then it rests in the dead-letter queue (alarmed like every function's).
The worker takes ``batch_size`` units per invocation and reports failed ones alone
(``ReportBatchItemFailures``); at most ``concurrency`` invocations run at once (the event
source's maximum concurrency), so an organisation of any size is swept by a fixed number
of workers, never by one invocation that grows with it."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from shared.app.triggers import WorkQueue


class SweepFanOut(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, trigger: WorkQueue) -> None:
        super().__init__(scope, construct_id)
        self.trigger = trigger
        self.dead_letter_queue = sqs.Queue(
            self,
            "DeadLetterQueue",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=Duration.days(14),
        )
        self.queue = sqs.Queue(
            self,
            "Units",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            visibility_timeout=Duration.seconds(trigger.visibility_seconds),
            retention_period=Duration.days(1),
            dead_letter_queue=sqs.DeadLetterQueue(
                queue=self.dead_letter_queue, max_receive_count=trigger.max_receives
            ),
        )

    def grant_send(self, role: iam.IRole) -> None:
        self.queue.grant_send_messages(role)

    def feed(self, worker: object, concurrency: int) -> None:
        """The worker takes its units from the queue (``worker``: a lambda_.Function)."""
        worker.add_event_source(  # type: ignore[attr-defined]
            sources.SqsEventSource(
                self.queue,
                batch_size=self.trigger.batch_size,
                report_batch_item_failures=True,
                max_concurrency=concurrency,
            )
        )
