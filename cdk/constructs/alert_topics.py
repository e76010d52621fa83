"""SNS topics for finance, team and admin alerts: KMS-encrypted, TLS only, email
subscribers from the settings.

Encryption uses a customer managed key rather than the AWS managed ``alias/aws/sns``:
the AWS managed key's policy cannot be changed, so CloudWatch alarms (``dlq_alarms``)
could not publish to a topic encrypted with it. This key's policy lets CloudWatch
(of this account only) use it; the functions get key use through ``grant_publish``.
"""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from constructs import Construct

from cdk.nag import acknowledge
from shared.budgets import Budget


class AlertTopics(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        finance_emails: Sequence[str],
        team_emails: Sequence[str],
        admin_emails: Sequence[str],
        budgets: Sequence[Budget] = (),
    ) -> None:
        super().__init__(scope, construct_id)
        account = Stack.of(self).account
        self.key = kms.Key(
            self,
            "Key",
            description="Encrypts the cost tracker's alert topics",
            enable_key_rotation=True,
        )
        self.key.add_to_resource_policy(
            iam.PolicyStatement(
                sid="AllowCloudWatchAlarmsToPublish",
                principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
                actions=["kms:Decrypt", "kms:GenerateDataKey*"],
                # In a key policy "*" means "this key".
                resources=["*"],
                conditions={"StringEquals": {"aws:SourceAccount": account}},
            )
        )
        self.finance = self._topic("Finance", "finance", finance_emails)
        self.team = self._topic("Team", "team", team_emails)
        self.admin = self._topic("Admin", "admin", admin_emails)
        for budget in budgets:
            for email in budget.recipients:
                # Each budget's own recipients get only that budget's alerts.
                self.finance.add_subscription(
                    subscriptions.EmailSubscription(
                        email,
                        filter_policy={
                            "budget_id": sns.SubscriptionFilter.string_filter(
                                allowlist=[budget.budget_id]
                            )
                        },
                    )
                )

    def _topic(self, construct_id: str, audience: str, emails: Sequence[str]) -> sns.Topic:
        topic = sns.Topic(
            self,
            construct_id,
            display_name=f"Cost tracker {audience} alerts",
            master_key=self.key,
            enforce_ssl=True,
        )
        for email in emails:
            topic.add_subscription(subscriptions.EmailSubscription(email))
        return topic

    def grant_publish(self, topic: sns.ITopic, role: iam.IRole) -> None:
        """Publish to ``topic`` (and use this key to encrypt the message)."""
        topic.grant_publish(role)
        acknowledge(
            role,
            "IAM5",
            "kms:GenerateDataKey* (added by Topic.grant_publish) is needed to publish to a "
            "KMS-encrypted topic; it is granted on the alert topics' key only.",
            finding="Action::kms:GenerateDataKey*",
        )
