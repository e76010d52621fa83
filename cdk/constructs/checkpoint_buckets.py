"""Turns on "send notifications to Amazon EventBridge" for the configured checkpoint
buckets, so their Object Created / Object Deleted events reach the checkpoint rule.

The buckets are not the stack's own: CDK's bucket-notifications custom resource adds
the EventBridge setting and keeps every notification already configured on them
(it only manages what it added).
"""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import Stack
from aws_cdk import aws_s3 as s3
from constructs import Construct

from cdk.nag import acknowledge


class CheckpointBuckets(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, buckets: Sequence[str]) -> None:
        super().__init__(scope, construct_id)
        self.buckets = []
        for n, name in enumerate(buckets):
            bucket = s3.Bucket.from_bucket_name(self, f"Bucket{n}", name)
            bucket.enable_event_bridge_notification()
            self.buckets.append(bucket)
        if buckets:
            self._acknowledge_notifications_handler()

    def _acknowledge_notifications_handler(self) -> None:
        """CDK's singleton handler lives at the stack root, created by the calls above."""
        stack = Stack.of(self)
        handler = stack.node.try_find_child(
            "BucketNotificationsHandler050a0587b7544547bf325f094a3db834"
        )
        if handler is None:
            return
        reason = (
            "CDK's own bucket-notifications handler (a custom resource provider): its "
            "role uses AWSLambdaBasicExecutionRole (its policy grants s3:PutBucketNotification "
            "on the configured checkpoint buckets only); it runs only at deploy time."
        )
        acknowledge(
            handler,
            "IAM4",
            reason,
            finding="Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
            "AWSLambdaBasicExecutionRole",
        )
