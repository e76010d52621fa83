"""Team routing from the synthesized template: each team's subscriptions are filtered to
its own alerts (the ``team`` attribute), checked by delivering through SNS (moto) with
the template's own filter policies, and the Slack channel reads a topic of its own."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from conftest import Synthesized
from moto import mock_aws

from shared.adapters.notify import Alert, SnsNotifier


def _team_topic_id(featured: Synthesized) -> str:
    (topic_id,) = [
        logical_id
        for logical_id in featured.resources("AWS::SNS::Topic")
        if featured.path_of(logical_id).endswith("/Alerts/Team/Resource")
    ]
    return topic_id


def _team_subscriptions(featured: Synthesized) -> list[dict[str, Any]]:
    topic_id = _team_topic_id(featured)
    return [
        resource["Properties"]
        for resource in featured.resources("AWS::SNS::Subscription").values()
        if resource["Properties"]["TopicArn"] == {"Ref": topic_id}
    ]


def test_every_team_subscription_is_filtered_to_its_team(featured: Synthesized) -> None:
    subscriptions = _team_subscriptions(featured)
    routes = {s["Endpoint"]: s["FilterPolicy"] for s in subscriptions if s["Protocol"] == "email"}
    assert routes == {
        "nlp@example.com": {"team": ["nlp"]},
        "vision@example.com": {"team": ["vision"]},
        "cv-lead@example.com": {"team": ["vision"]},
    }
    assert all("FilterPolicy" in s for s in subscriptions)  # nothing unfiltered


def test_the_default_stack_has_no_unfiltered_team_subscription(
    synthesized: Synthesized,
) -> None:
    assert _team_subscriptions(synthesized) == []


def test_a_team_slack_channel_reads_its_own_topic(featured: Synthesized) -> None:
    (channel,) = featured.resources("AWS::Chatbot::SlackChannelConfiguration").values()
    properties = channel["Properties"]
    assert properties["SlackWorkspaceId"] == "T0123ABCD"
    assert properties["SlackChannelId"] == "C0123ABCD"
    (topic,) = properties["SnsTopicArns"]
    assert topic != {"Ref": _team_topic_id(featured)}
    assert "nlp" in featured.path_of(topic["Ref"])


@pytest.fixture
def sns_world(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(key, "testing")
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws():
        yield boto3.Session(region_name="us-east-1")


def _idle_alert(team: str, job: str) -> Alert:
    return Alert(
        "team",
        "idle",
        f"Idle: {job}",
        f"{job} has been idle since 10:00",
        {"team": team, "job_id": job},
        alert_id=f"idle:{job}:i-1:2026-11-01T10:00:00Z",
        at="2026-11-01T10:05:00Z",
    )


def _drain(sqs: Any, url: str) -> list[str]:
    ids = []
    while True:
        messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
        if not messages:
            return ids
        for message in messages:
            body = json.loads(message["Body"])
            ids.append(body["MessageAttributes"]["alert_id"]["Value"])
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])


def test_a_queue_standing_for_team_a_receives_only_team_a_alerts(
    featured: Synthesized, sns_world: Any
) -> None:
    """SQS subscribers with the synthesized filter policies; alerts through the real
    notifier: each team's queue gets exactly its own alerts."""
    sns, sqs = sns_world.client("sns"), sns_world.client("sqs")
    topic = sns.create_topic(Name="team-alerts")["TopicArn"]
    queues = {}
    for n, properties in enumerate(_team_subscriptions(featured)):
        if properties["Protocol"] != "email":
            continue
        url = sqs.create_queue(QueueName=f"stands-for-{n}")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])
        sns.subscribe(
            TopicArn=topic,
            Protocol="sqs",
            Endpoint=arn["Attributes"]["QueueArn"],
            Attributes={"FilterPolicy": json.dumps(properties["FilterPolicy"])},
        )
        queues[properties["Endpoint"]] = url
    notifier = SnsNotifier(sns, {"team": topic})
    alerts = [
        _idle_alert("nlp", "llama-sft"),
        _idle_alert("vision", "vit-pretrain"),
        _idle_alert("nlp", "llama-dpo"),
        _idle_alert("", "untagged:i-0abc"),  # no team: no team's mailbox
    ]
    for alert in alerts:
        notifier.send(alert)
    received = {email: sorted(_drain(sqs, url)) for email, url in queues.items()}
    nlp = sorted(a.alert_id for a in alerts if a.attributes["team"] == "nlp")
    vision = [a.alert_id for a in alerts if a.attributes["team"] == "vision"]
    assert received == {
        "nlp@example.com": nlp,
        "vision@example.com": vision,
        "cv-lead@example.com": vision,
    }


def test_a_team_with_slack_gets_a_chatbot_copy_on_its_own_topic(sns_world: Any) -> None:
    sns, sqs = sns_world.client("sns"), sns_world.client("sqs")
    team_topic = sns.create_topic(Name="team")["TopicArn"]
    chat_topic = sns.create_topic(Name="nlp-chat")["TopicArn"]
    url = sqs.create_queue(QueueName="chat")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])
    sns.subscribe(TopicArn=chat_topic, Protocol="sqs", Endpoint=arn["Attributes"]["QueueArn"])
    notifier = SnsNotifier(sns, {"team": team_topic}, chat_topics={"nlp": chat_topic})
    notifier.send(_idle_alert("vision", "vit-pretrain"))
    notifier.send(_idle_alert("nlp", "llama-sft"))
    (message,) = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    chat = json.loads(json.loads(message["Body"])["Message"])
    assert chat["version"] == "1.0" and chat["source"] == "custom"
    assert chat["content"]["title"] == "Idle: llama-sft"
    assert chat["id"] == "idle:llama-sft:i-1:2026-11-01T10:00:00Z"


def test_the_api_may_only_manage_subscriptions_on_the_finance_topic(
    synthesized: Synthesized,
) -> None:
    from test_infra_stack import role_statements

    statements = role_statements(synthesized, "job_cost_api")
    sns_statements = [
        s for s in statements if any(str(a).startswith("sns:") for a in _list(s["Action"]))
    ]
    (statement,) = sns_statements
    assert sorted(_list(statement["Action"])) == [
        "sns:ListSubscriptionsByTopic",
        "sns:Subscribe",
        "sns:Unsubscribe",
    ]
    (finance,) = [
        logical_id
        for logical_id in synthesized.resources("AWS::SNS::Topic")
        if synthesized.path_of(logical_id).endswith("/Alerts/Finance/Resource")
    ]
    assert statement["Resource"] == {"Ref": finance}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]
