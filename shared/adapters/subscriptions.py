"""Email subscriptions of budget recipients to the finance topic (the only SNS
subscription code; the API uses it when a budget's ``recipients`` change).

Each address has one subscription, filtered on the ``recipients`` message attribute (a
``String.Array`` every budget alert carries: the budget's recipients): it receives the
alerts of exactly the budgets that name it when they are sent, so a budget naming an
address already subscribed needs no change (SNS keeps one subscription per address and
attributes). The recipient confirms by email; SNS deletes a subscription left
unconfirmed after three days.
"""

from __future__ import annotations

import json
from typing import Any

PENDING = "PendingConfirmation"


def recipient_filter_policy(email: str) -> str:
    return json.dumps({"recipients": [email.lower()]})


class RecipientSubscriptions:
    def __init__(self, sns_client: Any, topic_arn: str) -> None:
        self._sns = sns_client
        self._topic = topic_arn

    def existing(self) -> dict[str, str]:
        """address (lower case) -> subscription ARN (or ``PendingConfirmation``)."""
        found: dict[str, str] = {}
        paginator = self._sns.get_paginator("list_subscriptions_by_topic")
        for page in paginator.paginate(TopicArn=self._topic):
            for subscription in page.get("Subscriptions", []):
                if subscription.get("Protocol") == "email":
                    found[str(subscription["Endpoint"]).lower()] = subscription["SubscriptionArn"]
        return found

    def subscribe(self, email: str) -> str:
        response = self._sns.subscribe(
            TopicArn=self._topic,
            Protocol="email",
            Endpoint=email.lower(),
            Attributes={"FilterPolicy": recipient_filter_policy(email)},
            ReturnSubscriptionArn=True,
        )
        return str(response["SubscriptionArn"])

    def unsubscribe(self, subscription_arn: str) -> None:
        self._sns.unsubscribe(SubscriptionArn=subscription_arn)
