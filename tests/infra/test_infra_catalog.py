"""Every function of the catalog (shared.app.functions) is in the template as described
there: its trigger, timeout, memory, description, environment, and exactly its grants
(with every optional feature off, and on)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import Synthesized
from test_infra_stack import _as_list, actions_of, function_id, role_statements

from shared.app.function_grants import Grants, Topic
from shared.app.functions import COMMON_ENVIRONMENT, FUNCTIONS, Function, event_rules, schedules
from shared.app.triggers import EventRule, Every, Queue, WorkQueue

# What each grant comes to in IAM actions (some are added by CDK's own grant methods).
LOGS_AND_TRACES = {
    "logs:CreateLogStream",
    "logs:PutLogEvents",
    "xray:PutTraceSegments",
    "xray:PutTelemetryRecords",
}
LEDGER_READS = {
    "dynamodb:GetItem",
    "dynamodb:BatchGetItem",
    "dynamodb:Query",
    "dynamodb:ConditionCheckItem",
    "dynamodb:DescribeTable",
}
LEDGER_WRITES = {"dynamodb:PutItem", "dynamodb:UpdateItem"}
REPORT_WRITES = {
    "s3:PutObject",
    "s3:PutObjectLegalHold",
    "s3:PutObjectRetention",
    "s3:PutObjectTagging",
    "s3:PutObjectVersionTagging",
    "s3:Abort*",
}
PUBLISH = {"sns:Publish", "kms:Decrypt", "kms:GenerateDataKey*"}
RECIPIENTS = {"sns:Subscribe", "sns:Unsubscribe", "sns:ListSubscriptionsByTopic"}
FACTORY_ENVIRONMENT = {"POWERTOOLS_SERVICE_NAME", "PYDANTIC_DISABLE_PLUGINS"}
QUEUE_SENDS = {"sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"}
QUEUE_CONSUMES = {
    "sqs:ReceiveMessage",
    "sqs:ChangeMessageVisibility",
    "sqs:GetQueueUrl",
    "sqs:DeleteMessage",
    "sqs:GetQueueAttributes",
}
POLICY_ATTACHES = {"iam:AttachRolePolicy", "iam:AttachUserPolicy", "iam:AttachGroupPolicy"}
POLICY_DETACHES = {"iam:DetachRolePolicy", "iam:DetachUserPolicy", "iam:DetachGroupPolicy"}
POLICY_MANAGES = {"iam:CreatePolicy", "iam:GetPolicy", "iam:DeletePolicy"}
# The queue's sender, and every function given its URL (they plan timers too).
QUEUE_SENDERS = {f.trigger.sender for f in FUNCTIONS if isinstance(f.trigger, Queue)} | {
    f.name for f in FUNCTIONS if "CROSSING_TIMER_QUEUE_URL" in f.environment
}


def attach_detach(grants: Grants) -> set[str]:
    """Resource "*" IAM actions bounded by the iam:PolicyARN condition (the tracker's path)."""
    found = POLICY_DETACHES if grants.detaches_deny_policies else set()
    return found | (POLICY_ATTACHES | POLICY_DETACHES if grants.manages_deny_policies else set())


def expected_actions(function: Function, grants: Grants, synthesized: Synthesized) -> set[str]:
    actions = LOGS_AND_TRACES | LEDGER_READS | set(grants.unscoped_reads)
    actions |= set(grants.alarm_actions) | set(grants.training_reads)
    if function.asynchronous:
        actions.add("sqs:SendMessage")  # to its dead-letter queue
    if grants.ledger == "read_write":
        actions |= LEDGER_WRITES
    if grants.ledger_put_keys:
        actions.add("dynamodb:PutItem")
    if grants.reports_write:
        actions |= REPORT_WRITES
    if grants.publishes:
        actions |= PUBLISH
    if grants.manages_recipients:
        actions |= RECIPIENTS
    if grants.stops_instances:
        actions.add("ec2:StopInstances")
    accounts = synthesized.settings.ledger.accounts
    if grants.assumes_member_role:
        actions.add("sts:AssumeRole")
    if grants.stops_training_jobs:
        actions.add("sagemaker:StopTrainingJob")
    actions |= attach_detach(grants) | (POLICY_MANAGES if grants.manages_deny_policies else set())
    if function.name in QUEUE_SENDERS:
        actions |= QUEUE_SENDS
    if isinstance(function.trigger, Queue):
        actions |= QUEUE_CONSUMES
    if grants.sends_sweep_units:
        actions |= {"sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"}
    if isinstance(function.trigger, WorkQueue):  # the event source mapping's consumer rights
        actions |= {
            "sqs:ReceiveMessage",
            "sqs:ChangeMessageVisibility",
            "sqs:GetQueueUrl",
            "sqs:DeleteMessage",
            "sqs:GetQueueAttributes",
        }
    if grants.lists_organization:
        if accounts.organization_id and not accounts.organizations_role_name:
            actions.add("organizations:ListAccounts")
        if grants.ledger != "read_write":
            actions |= LEDGER_WRITES  # the ACCOUNTS items only (test_infra_accounts)
    if grants.data_exports_read and synthesized.settings.ledger.reconcile.data_exports_bucket:
        actions |= {"s3:ListBucket", "s3:GetObject"}
    return actions


def _synthesized(request: pytest.FixtureRequest, which: str) -> Synthesized:
    synthesized: Synthesized = request.getfixturevalue(which)
    return synthesized


@pytest.mark.parametrize("which", ["synthesized", "featured"])
@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.name)
def test_function_has_exactly_its_catalog_grants(
    request: pytest.FixtureRequest, which: str, function: Function
) -> None:
    synthesized = _synthesized(request, which)
    grants = function.grants_for(synthesized.settings.ledger)
    statements = role_statements(synthesized, function.name)
    assert actions_of(statements) == expected_actions(function, grants, synthesized)
    # Resource "*" only for the unscoped reads (and X-Ray).
    unscoped = {
        a for s in statements if "*" in _as_list(s["Resource"]) for a in _as_list(s["Action"])
    }
    listed = set()
    accounts = synthesized.settings.ledger.accounts
    if grants.lists_organization and accounts.organization_id:
        listed = {"organizations:ListAccounts"}
    # Attach / detach name the configured deny principals, never "*".
    expected_unscoped = set(grants.unscoped_reads) | listed
    assert unscoped == expected_unscoped | {a for a in LOGS_AND_TRACES if "xray" in a}
    # Publishing: to the topics it names, no other.
    topics = {
        audience: next(
            t
            for t in synthesized.resources("AWS::SNS::Topic")
            if f"/Alerts/{audience.value.capitalize()}/" in synthesized.path_of(t)
        )
        for audience in Topic
    }
    published = {
        ref["Ref"]
        for s in statements
        if "sns:Publish" in _as_list(s["Action"])
        for ref in _as_list(s["Resource"])
    }
    # Team alerts go to the team topic and to every team's chat topic.
    chats = {
        t
        for t in synthesized.resources("AWS::SNS::Topic")
        if "/Alerts/TeamChat-" in synthesized.path_of(t)
    }
    expected = {topics[topic] for topic in grants.publishes}
    assert published == (expected | chats if Topic.TEAM in grants.publishes else expected)


@pytest.mark.parametrize("which", ["synthesized", "featured"])
@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.name)
def test_function_has_its_catalog_timeout_memory_and_environment(
    request: pytest.FixtureRequest, which: str, function: Function
) -> None:
    synthesized = _synthesized(request, which)
    logical_id = function_id(synthesized, function.name)
    props = synthesized.json["Resources"][logical_id]["Properties"]
    assert props["Timeout"] == function.timeout_seconds
    assert props["MemorySize"] == function.memory_mb
    assert props["Description"] == f"costtracker: {function.description}"
    assert set(props["Environment"]["Variables"]) == (
        FACTORY_ENVIRONMENT | set(COMMON_ENVIRONMENT) | set(function.environment)
    )
    settings = synthesized.settings
    reserved = settings.event_reserved_concurrency if function.event_path else None
    if function.name == "job_cost_api":
        reserved = settings.api_reserved_concurrency
    assert props.get("ReservedConcurrentExecutions") == (reserved or None)


def _rules_targeting(synthesized: Synthesized, logical_id: str) -> list[dict[str, Any]]:
    return [
        rule["Properties"]
        for rule in synthesized.resources("AWS::Events::Rule").values()
        for target in rule["Properties"]["Targets"]
        if target["Arn"] == {"Fn::GetAtt": [logical_id, "Arn"]}
    ]


@pytest.mark.parametrize("which", ["synthesized", "featured"])
@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.name)
def test_function_has_its_catalog_trigger(
    request: pytest.FixtureRequest, which: str, function: Function
) -> None:
    synthesized = _synthesized(request, which)
    logical_id = function_id(synthesized, function.name)
    rules = _rules_targeting(synthesized, logical_id)
    config = synthesized.settings.ledger
    if isinstance(function.trigger, EventRule):
        pattern = event_rules(config.checkpoint.buckets)[function.name]
        assert [rule["EventPattern"] for rule in rules] == [pattern]
    elif isinstance(function.trigger, Every):
        (schedule,) = [
            s
            for s in schedules(config.summary.time_utc, config.finance_timezone)
            if s.function == function.name
        ]
        cron = schedule.cron()
        expression = f"cron({cron['minute']} {cron['hour']} * * ? *)"
        if schedule.local:  # the finance day's clock: an EventBridge Scheduler schedule
            assert rules == []
            found = [
                s["Properties"]
                for s in synthesized.resources("AWS::Scheduler::Schedule").values()
                if s["Properties"]["Target"]["Arn"] == {"Fn::GetAtt": [logical_id, "Arn"]}
            ]
            assert [(s["ScheduleExpression"], s["ScheduleExpressionTimezone"]) for s in found] == [
                (expression, config.finance_timezone)
            ]
        else:
            assert [rule["ScheduleExpression"] for rule in rules] == [expression]
            assert [rule["Description"] for rule in rules] == [
                f"costtracker: {schedule.description}"
            ]
    elif isinstance(function.trigger, Queue | WorkQueue):  # an SQS event source, no rule
        assert rules == []
        (mapping,) = [
            m["Properties"]
            for m in synthesized.resources("AWS::Lambda::EventSourceMapping").values()
            if m["Properties"]["FunctionName"] == {"Ref": logical_id}
        ]
        assert "Fn::GetAtt" in mapping["EventSourceArn"]
        if isinstance(function.trigger, WorkQueue):
            assert mapping["BatchSize"] == function.trigger.batch_size
            assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
            concurrency = synthesized.settings.sweep_concurrency
            assert mapping["ScalingConfig"] == {"MaximumConcurrency": concurrency}
    else:  # the API: invoked by API Gateway only
        assert rules == []
        assert f'"{logical_id}"' in json.dumps(synthesized.resources("AWS::ApiGateway::Method"))


def test_the_template_has_no_function_the_catalog_does_not_list(synthesized: Synthesized) -> None:
    functions = synthesized.resources("AWS::Lambda::Function")
    assert set(functions) == {function_id(synthesized, f.name) for f in FUNCTIONS}
