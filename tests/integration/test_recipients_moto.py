"""Budget recipients set through the API get email (moto): the API subscribes each new
address to the finance topic, filtered to the alerts of the budgets that name it, and
unsubscribes it when no budget names it any more. A queue subscribed with the same
filter policy stands for the recipient's mailbox."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from moto import mock_aws

from costtracker.lambda_context import FakeLambdaContext
from costtracker.local_api import proxy_event, with_local_admin
from shared.adapters.subscriptions import recipient_filter_policy
from shared.app import runtime
from shared.config.ledger import LedgerConfig
from shared.domain.clock import FixedClock
from shared.services.budget_tick import run_tick
from tests.aws_events import ec2_state_event
from tests.support import moto_instance, moto_ledger

T0 = datetime(2026, 11, 1, tzinfo=UTC)
TABLE = "ledger-recipients"
CONFIG = LedgerConfig.model_validate(
    {"live_prices": False, "prices": {"ec2": {"trn1.32xlarge": "20"}}}
)


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    with mock_aws():
        moto_ledger(monkeypatch, TABLE, with_local_admin(CONFIG.model_dump_json()))
        sns = boto3.client("sns", region_name="us-east-1")
        topic = sns.create_topic(Name="finance")["TopicArn"]
        ec2 = boto3.client("ec2", region_name="us-east-1")
        instance = moto_instance(ec2, "trn1.32xlarge", {"training-job": "llama", "team": "nlp"})
        monkeypatch.setenv("FINANCE_TOPIC_ARN", topic)
        clock = FixedClock(T0)
        with runtime.override(clock):
            from functions.instance_state.handler import handler

            handler(
                ec2_state_event("e1", instance, "running", "2026-11-01T00:00:00Z"),
                FakeLambdaContext("test"),
            )
            yield {"sns": sns, "topic": topic, "clock": clock}


def api(method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    from functions.job_cost_api.handler import handler

    event = proxy_event(
        method, path, {"Content-Type": "application/json"}, json.dumps(body) if body else None
    )
    response = handler(event, FakeLambdaContext("test"))  # type: ignore[arg-type]
    return response["statusCode"], json.loads(response["body"])


def email_subscriptions(aws: dict[str, Any]) -> dict[str, str]:
    """address -> filter policy, as SNS holds them."""
    found = {}
    for sub in aws["sns"].list_subscriptions_by_topic(TopicArn=aws["topic"])["Subscriptions"]:
        if sub["Protocol"] == "email":
            attributes = aws["sns"].get_subscription_attributes(
                SubscriptionArn=sub["SubscriptionArn"]
            )["Attributes"]
            found[sub["Endpoint"]] = json.loads(attributes["FilterPolicy"])
    return found


def budget(amount: str, *recipients: str) -> dict[str, Any]:
    return {"scope": {"job": "llama"}, "amount_usd": amount, "recipients": list(recipients)}


def test_recipients_are_subscribed_and_unsubscribed_by_the_api(aws: dict[str, Any]) -> None:
    status, body = api("PUT", "/budgets/llama", budget("10", "Lead@Example.com"))
    assert status == 200, body
    assert body["subscriptions"]["subscribed"] == ["lead@example.com"]
    assert email_subscriptions(aws) == {"lead@example.com": {"recipients": ["lead@example.com"]}}
    # A second budget naming the same address needs no new subscription.
    status, body = api("PUT", "/budgets/llama-big", budget("1000", "lead@example.com"))
    assert body["subscriptions"]["already"] == ["lead@example.com"]
    status, body = api("PUT", "/budgets/llama", budget("10", "cfo@example.com"))
    assert body["subscriptions"]["subscribed"] == ["cfo@example.com"]
    assert body["subscriptions"]["unsubscribed"] == []  # llama-big still names lead@
    assert set(email_subscriptions(aws)) == {"lead@example.com", "cfo@example.com"}
    status, body = api("DELETE", "/budgets/llama-big")
    assert status == 200 and body["subscriptions"]["unsubscribed"] == ["lead@example.com"]
    assert set(email_subscriptions(aws)) == {"cfo@example.com"}


def test_a_recipients_subscription_receives_only_the_budgets_that_name_it(
    aws: dict[str, Any],
) -> None:
    """A queue with the filter the API gave lead@ receives llama's alerts, not other's."""
    api("PUT", "/budgets/llama", budget("10", "lead@example.com"))
    api("PUT", "/budgets/other", budget("10", "someone@example.com"))
    sqs = boto3.client("sqs", region_name="us-east-1")
    queue = sqs.create_queue(QueueName="lead-mailbox")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])
    aws["sns"].subscribe(
        TopicArn=aws["topic"],
        Protocol="sqs",
        Endpoint=arn["Attributes"]["QueueArn"],
        Attributes={"FilterPolicy": recipient_filter_policy("lead@example.com")},
    )
    now = T0 + timedelta(hours=1)  # $20 of $10: both budgets alert
    sent = run_tick(
        runtime.ledger_deps(), runtime.budget_store(), CONFIG, runtime.notifier(), now, lambda: 55.0
    ).alerts
    assert {"llama:100", "other:100"} <= set(sent)
    messages = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]
    budgets = {json.loads(m["Body"])["MessageAttributes"]["budget_id"]["Value"] for m in messages}
    assert budgets == {"llama"}


def test_an_sns_failure_refuses_the_change_and_records_nothing(
    aws: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from botocore.exceptions import ClientError

    from shared.adapters.subscriptions import RecipientSubscriptions

    def throttled(self: Any, email: str) -> str:
        raise ClientError({"Error": {"Code": "Throttling", "Message": "slow"}}, "Subscribe")

    monkeypatch.setattr(RecipientSubscriptions, "subscribe", throttled)
    status, body = api("PUT", "/budgets/llama", budget("10", "lead@example.com"))
    assert status == 503 and "try again" in body["message"]
    assert api("GET", "/budgets/llama")[0] == 404


def all_subscriptions(aws: dict[str, Any]) -> dict[str, str]:
    """address -> subscription ARN, every email subscription of the topic."""
    listed = aws["sns"].list_subscriptions_by_topic(TopicArn=aws["topic"])["Subscriptions"]
    return {s["Endpoint"]: s["SubscriptionArn"] for s in listed if s["Protocol"] == "email"}


def test_finances_own_subscription_survives_a_recipient_edit(aws: dict[str, Any]) -> None:
    """The stack subscribes finance_emails unfiltered; naming such an address on a budget
    and removing it again (any finance caller could) must not unsubscribe it."""
    own = aws["sns"].subscribe(
        TopicArn=aws["topic"], Protocol="email", Endpoint="finance@example.com",
        ReturnSubscriptionArn=True,
    )["SubscriptionArn"]  # fmt: skip
    status, body = api("PUT", "/budgets/llama", budget("10", "finance@example.com"))
    assert status == 200 and body["subscriptions"]["already"] == ["finance@example.com"]
    status, body = api("PUT", "/budgets/llama", budget("10"))
    assert status == 200, body
    assert body["subscriptions"]["unsubscribed"] == []
    assert body["subscriptions"]["not_ours"] == ["finance@example.com"]
    assert all_subscriptions(aws) == {"finance@example.com": own}
    status, body = api("PUT", "/budgets/other", budget("10", "finance@example.com"))
    assert api("DELETE", "/budgets/other")[1]["subscriptions"]["not_ours"] == [
        "finance@example.com"
    ]
    assert all_subscriptions(aws) == {"finance@example.com": own}


def test_a_stack_made_filtered_subscription_is_never_taken_for_the_apis(
    aws: dict[str, Any],
) -> None:
    """The stack's subscription for a context budget's recipient has the very filter the API
    would give (SNS would hand its ARN back to a Subscribe): the API leaves it alone."""
    stack_made = aws["sns"].subscribe(
        TopicArn=aws["topic"], Protocol="email", Endpoint="lead@example.com",
        Attributes={"FilterPolicy": recipient_filter_policy("lead@example.com")},
        ReturnSubscriptionArn=True,
    )["SubscriptionArn"]  # fmt: skip
    api("PUT", "/budgets/llama", budget("10", "lead@example.com", "cfo@example.com"))
    status, body = api("DELETE", "/budgets/llama")
    assert status == 200, body
    assert body["subscriptions"]["unsubscribed"] == ["cfo@example.com"]  # the API's own
    assert body["subscriptions"]["not_ours"] == ["lead@example.com"]
    assert all_subscriptions(aws) == {"lead@example.com": stack_made}


def test_a_subscription_whose_arn_was_not_recorded_is_still_the_apis_on_retry(
    aws: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Subscribed, then recording its ARN failed: the retry finds the subscription, knows it
    is the API's (its intent was recorded before it was made), records its ARN, and a later
    removal unsubscribes it."""
    from shared.adapters.budget_store import SUBSCRIBING, BudgetStore

    real = BudgetStore.record_api_subscription

    def arn_write_fails(self: Any, email: str, arn: str) -> None:
        if arn != SUBSCRIBING:
            raise RuntimeError("table unavailable")
        real(self, email, arn)

    monkeypatch.setattr(BudgetStore, "record_api_subscription", arn_write_fails)
    with pytest.raises(RuntimeError):
        api("PUT", "/budgets/llama", budget("10", "lead@example.com"))
    assert set(all_subscriptions(aws)) == {"lead@example.com"}
    assert api("GET", "/budgets/llama")[0] == 404  # the budget was not recorded
    monkeypatch.setattr(BudgetStore, "record_api_subscription", real)
    status, body = api("PUT", "/budgets/llama", budget("10", "lead@example.com"))
    assert status == 200 and body["subscriptions"]["subscribed"] == ["lead@example.com"]
    status, body = api("DELETE", "/budgets/llama")
    assert body["subscriptions"]["unsubscribed"] == ["lead@example.com"]
    assert all_subscriptions(aws) == {}
