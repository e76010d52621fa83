"""SNS topics for finance, team and admin alerts: KMS-encrypted, TLS only, email
subscribers from the settings.

Routing: each team's addresses subscribe to the team topic with a filter policy on the
``team`` message attribute, so a team gets only its own alerts; a team may also have a
Slack channel (AWS Chatbot), fed by a topic of its own (Chatbot makes its own subscription,
which CDK cannot filter). A budget's recipients get one subscription per address to the
finance topic, filtered on the ``recipients`` attribute of budget alerts, as the API
does for budgets it sets (shared/adapters/subscriptions.py).

Encryption uses a customer managed key rather than the AWS managed ``alias/aws/sns``:
the AWS managed key's policy cannot be changed, so CloudWatch alarms (``dlq_alarms``)
could not publish to a topic encrypted with it. This key's policy lets CloudWatch
(of this account only) use it; the functions get key use through ``grant_publish``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from aws_cdk import Stack
from aws_cdk import aws_chatbot as chatbot
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from constructs import Construct

from cdk.nag import acknowledge
from cdk.stack_settings import TeamRoute
from shared.config.budgets import Budget

# What the API may do on the finance topic: its budgets' recipient subscriptions.
RECIPIENT_ACTIONS = ["sns:Subscribe", "sns:Unsubscribe", "sns:ListSubscriptionsByTopic"]


class AlertTopics(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        finance_emails: Sequence[str],
        teams: Mapping[str, TeamRoute],
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
        self.team = self._topic("Team", "team", ())
        self.admin = self._topic("Admin", "admin", admin_emails)
        # team -> the topic its Slack channel reads (functions publish a copy there).
        self.chat_topics: dict[str, sns.Topic] = {}
        for team, route in sorted(teams.items()):
            only_this_team = {"team": sns.SubscriptionFilter.string_filter(allowlist=[team])}
            for email in route.emails:
                self.team.add_subscription(
                    subscriptions.EmailSubscription(email, filter_policy=only_this_team)
                )
            if route.slack is not None:
                chat = sns.Topic(
                    self,
                    f"TeamChat-{team}",
                    display_name=f"Cost tracker alerts for team {team} (Slack)",
                    master_key=self.key,
                    enforce_ssl=True,
                )
                chatbot.SlackChannelConfiguration(
                    self,
                    f"TeamSlack-{team}",
                    slack_channel_configuration_name=f"costtracker-{team}"[:128],
                    slack_workspace_id=route.slack.workspace_id,
                    slack_channel_id=route.slack.channel_id,
                    notification_topics=[chat],
                )
                self.chat_topics[team] = chat
        # One subscription per address (SNS refuses a second one with other attributes),
        # filtered to the alerts of the budgets that name it (their ``recipients``
        # attribute): the same subscription the API makes for budgets it sets.
        finance_all = {e.lower() for e in finance_emails}  # these get every alert anyway
        named = {e.lower() for b in budgets for e in b.recipients} - finance_all
        for email in sorted(named):
            self.finance.add_subscription(
                subscriptions.EmailSubscription(
                    email,
                    filter_policy={
                        "recipients": sns.SubscriptionFilter.string_filter(allowlist=[email])
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

    def grant_team_publish(self, role: iam.IRole) -> None:
        """Publish team alerts: the team topic and every team's chat topic."""
        self.grant_publish(self.team, role)
        for chat in self.chat_topics.values():
            chat.grant_publish(role)

    def grant_manage_recipients(self, role: iam.IRole) -> None:
        """Subscribe and unsubscribe budget recipients on the finance topic, nothing else
        (the API, when a budget's recipients change)."""
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=RECIPIENT_ACTIONS,
                resources=[self.finance.topic_arn],
            )
        )
