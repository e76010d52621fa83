"""Assertions on the synthesized template, against the project's single sources of
truth (ledger_schema, the function catalog shared.app.functions, LedgerConfig)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk.assertions import Match, Template
from conftest import Synthesized

from cdk.constructs.lambda_factory import _pascal
from shared.adapters import ledger_schema
from shared.app.functions import BY_NAME, EVENT_RULES, FUNCTIONS, SCHEDULES
from shared.config.ledger import LedgerConfig

ASYNC_FUNCTIONS = sorted(f.name for f in FUNCTIONS if f.asynchronous)
ALL_FUNCTIONS = [*ASYNC_FUNCTIONS, *(f.name for f in FUNCTIONS if not f.asynchronous)]
DYNAMODB_WRITES = {
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:BatchWriteItem",
}
# Actions AWS only allows on Resource "*" (no resource-level permissions).
UNSCOPABLE = {
    "xray:PutTraceSegments",
    "xray:PutTelemetryRecords",
    "ec2:DescribeInstances",
    "ec2:DescribeVolumes",
    "ec2:DescribeSpotPriceHistory",
    "ec2:DescribeCapacityReservations",
    "pricing:GetProducts",
    "ce:GetCostAndUsage",
    # Measured utilization (rule 10): GetMetricData has no resource-level permissions.
    "cloudwatch:GetMetricData",
    # Lists every file system of the account (AmazonFSxReadOnlyAccess grants it on "*").
    "fsx:DescribeFileSystems",
}


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def function_id(synthesized: Synthesized, name: str) -> str:
    """The logical id of the Lambda function made from functions/<name>."""
    matches = [
        logical_id
        for logical_id in synthesized.resources("AWS::Lambda::Function")
        if f"/Functions/{_pascal(name)}/Function/" in synthesized.path_of(logical_id)
    ]
    assert len(matches) == 1, f"expected one function for {name}, got {matches}"
    return matches[0]


def role_statements(synthesized: Synthesized, name: str) -> list[dict[str, Any]]:
    """Every policy statement attached to the role of function ``name``."""
    function = synthesized.json["Resources"][function_id(synthesized, name)]
    role_id = function["Properties"]["Role"]["Fn::GetAtt"][0]
    role = synthesized.json["Resources"][role_id]["Properties"]
    assert not role.get("ManagedPolicyArns"), f"{name} role has managed policies"
    statements = [s for p in role.get("Policies", []) for s in p["PolicyDocument"]["Statement"]]
    for policy in synthesized.resources("AWS::IAM::Policy").values():
        if {"Ref": role_id} in policy["Properties"].get("Roles", []):
            statements += policy["Properties"]["PolicyDocument"]["Statement"]
    return statements


def actions_of(statements: list[dict[str, Any]]) -> set[str]:
    return {a for s in statements if s["Effect"] == "Allow" for a in _as_list(s["Action"])}


# --- the ledger table ----------------------------------------------------------------


def test_table_is_on_demand_with_pitr_ttl_and_sse(template: Template) -> None:
    template.resource_count_is("AWS::DynamoDB::Table", 1)
    template.has_resource(
        "AWS::DynamoDB::Table",
        {
            "DeletionPolicy": "Retain",
            "UpdateReplacePolicy": "Retain",
            "Properties": Match.object_like(
                {
                    "BillingMode": "PAY_PER_REQUEST",
                    "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
                    "TimeToLiveSpecification": {
                        "AttributeName": ledger_schema.TTL_ATTRIBUTE,
                        "Enabled": True,
                    },
                    "SSESpecification": {"SSEEnabled": True},
                    "KeySchema": [
                        {"AttributeName": ledger_schema.PARTITION_KEY, "KeyType": "HASH"},
                        {"AttributeName": ledger_schema.SORT_KEY, "KeyType": "RANGE"},
                    ],
                }
            ),
        },
    )


def test_table_matches_the_schema_of_the_local_emulator(synthesized: Synthesized) -> None:
    """Same keys, attribute types and GSIs as ledger_schema.create_table_request."""
    (table,) = synthesized.resources("AWS::DynamoDB::Table").values()
    props = table["Properties"]
    expected = ledger_schema.create_table_request("unused")
    definitions = expected["AttributeDefinitions"]
    assert isinstance(definitions, list)
    assert sorted(props["AttributeDefinitions"], key=str) == sorted(definitions, key=str)
    by_name = {gsi["IndexName"]: gsi for gsi in props["GlobalSecondaryIndexes"]}
    assert set(by_name) == {index.name for index in ledger_schema.INDEXES}
    for index in ledger_schema.INDEXES:
        assert by_name[index.name] == {
            "IndexName": index.name,
            "KeySchema": [
                {"AttributeName": index.partition_key, "KeyType": "HASH"},
                {"AttributeName": index.sort_key, "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "ALL"},
        }


# --- events and schedules ------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(EVENT_RULES))
def test_event_rule_has_exactly_the_shared_pattern(synthesized: Synthesized, name: str) -> None:
    rules = [
        rule["Properties"]
        for rule in synthesized.resources("AWS::Events::Rule").values()
        if rule["Properties"].get("EventPattern") == EVENT_RULES[name]
    ]
    assert len(rules) == 1, f"{name}: {len(rules)} rules with its pattern"
    (target,) = rules[0]["Targets"]
    assert target["Arn"] == {"Fn::GetAtt": [function_id(synthesized, name), "Arn"]}


@pytest.mark.parametrize("schedule", SCHEDULES, ids=lambda s: s.function)
def test_schedule_rule_cron(synthesized: Synthesized, schedule: Any) -> None:
    cron = schedule.cron()
    expression = f"cron({cron['minute']} {cron['hour']} * * ? *)"
    rules = [
        rule["Properties"]
        for rule in synthesized.resources("AWS::Events::Rule").values()
        if rule["Properties"].get("ScheduleExpression") == expression
    ]
    assert len(rules) == 1, f"{schedule.function}: no single rule with {expression}"
    (target,) = rules[0]["Targets"]
    assert target["Arn"] == {"Fn::GetAtt": [function_id(synthesized, schedule.function), "Arn"]}


def test_every_rule_target_has_a_dead_letter_queue_and_retries(synthesized: Synthesized) -> None:
    rules = synthesized.resources("AWS::Events::Rule")
    assert len(rules) == len(EVENT_RULES) + len(SCHEDULES)
    queues = synthesized.resources("AWS::SQS::Queue")
    for logical_id, rule in rules.items():
        for target in rule["Properties"]["Targets"]:
            dlq = target.get("DeadLetterConfig", {}).get("Arn", {}).get("Fn::GetAtt", [""])[0]
            assert dlq in queues, f"{logical_id} target without an SQS dead-letter queue"
            assert target["RetryPolicy"]["MaximumRetryAttempts"] == 2


@pytest.mark.parametrize("name", ASYNC_FUNCTIONS)
def test_async_function_has_dlq_and_two_retries(synthesized: Synthesized, name: str) -> None:
    logical_id = function_id(synthesized, name)
    props = synthesized.json["Resources"][logical_id]["Properties"]
    queue_id = props["DeadLetterConfig"]["TargetArn"]["Fn::GetAtt"][0]
    queue = synthesized.json["Resources"][queue_id]
    assert queue["Type"] == "AWS::SQS::Queue"
    assert queue["Properties"]["SqsManagedSseEnabled"] is True
    assert queue["Properties"]["MessageRetentionPeriod"] == 14 * 24 * 3600
    invoke_configs = [
        config["Properties"]
        for config in synthesized.resources("AWS::Lambda::EventInvokeConfig").values()
        if config["Properties"]["FunctionName"] == {"Ref": logical_id}
    ]
    assert [c["MaximumRetryAttempts"] for c in invoke_configs] == [2]


def test_dead_letter_queues_deny_insecure_transport(synthesized: Synthesized) -> None:
    queues = synthesized.resources("AWS::SQS::Queue")
    # One per asynchronous function, the crossing timers' queue and its dead letters,
    # and the sweep's work queue and its own.
    assert len(queues) == len(ASYNC_FUNCTIONS) + 4
    secured = set()
    for policy in synthesized.resources("AWS::SQS::QueuePolicy").values():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            if statement["Effect"] == "Deny" and statement.get("Condition") == {
                "Bool": {"aws:SecureTransport": "false"}
            }:
                secured |= {q["Ref"] for q in policy["Properties"]["Queues"]}
    assert secured == set(queues)


def test_every_dead_letter_queue_alarms_the_admin_topic(synthesized: Synthesized) -> None:
    alarms = synthesized.resources("AWS::CloudWatch::Alarm").values()
    watched = {
        dim["Value"]["Fn::GetAtt"][0]
        for alarm in alarms
        for dim in alarm["Properties"]["Dimensions"]
        if alarm["Properties"]["MetricName"] == "ApproximateNumberOfMessagesVisible"
    }
    # Every queue but the crossing timers' and the sweep's own (messages wait there).
    waiting = {
        q for q in synthesized.resources("AWS::SQS::Queue")
        if synthesized.path_of(q).endswith("/CrossingTimers/Queue/Resource")
        or "/SweepFanOut/Units/" in synthesized.path_of(q)
    }  # fmt: skip
    assert watched == set(synthesized.resources("AWS::SQS::Queue")) - waiting and len(waiting) == 2
    admin = [t for t in synthesized.resources("AWS::SNS::Topic") if "/Alerts/Admin/" in
             synthesized.path_of(t)]  # fmt: skip
    for alarm in alarms:
        assert alarm["Properties"]["AlarmActions"] == [{"Ref": admin[0]}]


# --- the API ----------------------------------------------------------------------------


def test_every_api_method_requires_iam_auth(synthesized: Synthesized) -> None:
    methods = synthesized.resources("AWS::ApiGateway::Method")
    assert len(methods) >= 2  # ANY on / and on /{proxy+}
    for logical_id, method in methods.items():
        props = method["Properties"]
        assert props["AuthorizationType"] == "AWS_IAM", logical_id
        assert props.get("ApiKeyRequired") in (None, False), logical_id
        assert "RequestValidatorId" in props, logical_id


def test_api_stage_traces_and_logs_access(template: Template) -> None:
    template.has_resource_properties(
        "AWS::ApiGateway::Stage",
        {
            "TracingEnabled": True,
            "AccessLogSetting": Match.object_like({"DestinationArn": Match.any_value()}),
        },
    )
    template.resource_count_is("AWS::ApiGateway::ApiKey", 0)
    template.has_output("*", {"Value": Match.object_like({"Fn::Join": Match.any_value()})})


def test_api_function_writes_only_the_budget_partition(synthesized: Synthesized) -> None:
    statements = role_statements(synthesized, "job_cost_api")
    actions = actions_of(statements)
    assert {"dynamodb:Query", "dynamodb:GetItem"} <= actions
    writes = [s for s in statements if set(_as_list(s["Action"])) & DYNAMODB_WRITES]
    assert [set(_as_list(s["Action"])) for s in writes] == [{"dynamodb:PutItem"}]
    # Budgets, their history, the price cache (GET /prices caches what it looks up), and
    # an action's release with the alerts announcing it (recorded in the outbox).
    assert writes[0]["Condition"] == {
        "ForAllValues:StringLike": {
            "dynamodb:LeadingKeys": [
                "BUDGETS", "BUDGETS_HISTORY#*", "RECIPIENTS", "PRICE#*", "ACTIONS", "OUTBOX"]
        }
    }  # fmt: skip
    # No publishing: only its budgets' recipient subscriptions (test_infra_alert_routing).
    assert {a for a in actions if a.startswith("sns:")} == {
        "sns:Subscribe", "sns:Unsubscribe", "sns:ListSubscriptionsByTopic"}  # fmt: skip


@pytest.mark.parametrize("name", ASYNC_FUNCTIONS)
def test_only_ledger_writers_can_write(synthesized: Synthesized, name: str) -> None:
    actions = actions_of(role_statements(synthesized, name))
    if BY_NAME[name].grants.ledger == "read_write":
        assert actions & DYNAMODB_WRITES == {"dynamodb:PutItem", "dynamodb:UpdateItem"}
    else:
        assert not actions & DYNAMODB_WRITES
    assert "dynamodb:Scan" not in actions


def _statements_with(synthesized: Synthesized, name: str, action: str) -> list[dict[str, Any]]:
    found = []
    for statement in role_statements(synthesized, name):
        actions = statement["Action"]
        if action in (actions if isinstance(actions, list) else [actions]):
            found.append(statement)
    return found


@pytest.mark.parametrize("name", ["alarm_lifecycle", "alarm_sweep"])
def test_alarm_rights_are_limited_to_our_own_alarms(synthesized: Synthesized, name: str) -> None:
    (statement,) = _statements_with(synthesized, name, "cloudwatch:DeleteAlarms")
    assert "alarm:costtracker-*" in json.dumps(statement["Resource"])


@pytest.mark.parametrize("name", ["alarm_state", "alarm_sweep"])
def test_stop_is_allowed_only_on_instances_tagged_for_auto_stop(
    featured: Synthesized, name: str
) -> None:
    synthesized = featured  # auto-stop enabled
    (statement,) = _statements_with(synthesized, name, "ec2:StopInstances")
    assert statement["Condition"] == {
        "StringEquals": {"aws:ResourceTag/costtracker:auto-stop": "true"}
    }
    # Budget actions stop through the same stopper, on the same condition.
    stoppers = {"alarm_state", "alarm_sweep", "budget_tick", "budget_timer"}
    for other in ALL_FUNCTIONS:
        found = _statements_with(synthesized, other, "ec2:StopInstances")
        if other in stoppers:
            assert [s["Condition"] for s in found] == [statement["Condition"]], other
        else:
            assert not found, other


def test_each_publisher_publishes_only_to_its_own_topic(synthesized: Synthesized) -> None:
    topics = {
        audience: next(t for t in synthesized.resources("AWS::SNS::Topic")
                       if f"/Alerts/{audience}/" in synthesized.path_of(t))
        for audience in ("Admin", "Team", "Finance")
    }  # fmt: skip
    expected = {"price_backfill": [{"Ref": topics["Admin"]}],
                "reservation_refresh": [{"Ref": topics["Admin"]}],
                "alarm_state": [{"Ref": topics["Team"]}],
                # The outbox's delivery path sends every audience's pending alerts.
                "budget_tick": [[{"Ref": topics[a]} for a in ("Admin", "Finance", "Team")]],
                "budget_timer": [[{"Ref": topics[a]} for a in ("Admin", "Finance", "Team")]],
                "daily_summary": [{"Ref": topics["Finance"]}]}  # fmt: skip
    for name in ALL_FUNCTIONS:
        publish = [
            s for s in role_statements(synthesized, name) if "sns:Publish" in _as_list(s["Action"])
        ]
        assert [s["Resource"] for s in publish] == expected.get(name, []), name


@pytest.mark.parametrize("name", ALL_FUNCTIONS)
def test_wildcard_resources_only_for_unscopable_actions(
    synthesized: Synthesized, name: str
) -> None:
    for statement in role_statements(synthesized, name):
        if "*" in _as_list(statement["Resource"]):
            assert set(_as_list(statement["Action"])) <= UNSCOPABLE, statement


def test_training_job_reads_are_scoped_to_training_jobs(synthesized: Synthesized) -> None:
    (statement,) = _statements_with(
        synthesized, "training_job_state", "sagemaker:DescribeTrainingJob"
    )
    assert ":training-job/*" in json.dumps(statement["Resource"])
    others = [f for f in ALL_FUNCTIONS if f != "training_job_state"]
    for other in others:
        assert not _statements_with(synthesized, other, "sagemaker:DescribeTrainingJob"), other


def test_ec2_and_price_reads_granted_where_needed(synthesized: Synthesized) -> None:
    assert {
        "ec2:DescribeInstances",
        "ec2:DescribeVolumes",
        "ec2:DescribeSpotPriceHistory",
        "pricing:GetProducts",
    } <= actions_of(role_statements(synthesized, "instance_state"))
    backfill = actions_of(role_statements(synthesized, "price_backfill"))
    assert {"ec2:DescribeSpotPriceHistory", "pricing:GetProducts"} <= backfill
    assert "ec2:DescribeInstances" not in backfill
    assert not {a for a in actions_of(role_statements(synthesized, "day_boundary"))
                if a.startswith(("ec2:", "pricing:"))}  # fmt: skip
    # GET /prices: the cache, the snapshot, or a Price List call of its own.
    api = actions_of(role_statements(synthesized, "job_cost_api"))
    assert {a for a in api if a.startswith(("ec2:", "pricing:"))} == {
        "ec2:DescribeSpotPriceHistory", "pricing:GetProducts"}  # fmt: skip


# --- functions, logs, topics ----------------------------------------------------------


def test_all_functions_arm64_python311_with_config(synthesized: Synthesized) -> None:
    functions = synthesized.resources("AWS::Lambda::Function")
    assert len(functions) == len(ALL_FUNCTIONS)
    layers = {
        synthesized.path_of(x).split("/")[-2]: x
        for x in synthesized.resources("AWS::Lambda::LayerVersion")
    }
    assert set(layers) == {"Dependencies", "Pyarrow"}
    for logical_id, function in functions.items():
        props = function["Properties"]
        assert props["Architectures"] == ["arm64"], logical_id
        assert props["Runtime"] == "python3.11", logical_id
        assert props["Handler"] == "handler.handler", logical_id
        assert props["TracingConfig"] == {"Mode": "Active"}, logical_id
        assert props["Layers"][0] == {"Ref": layers["Dependencies"]}, logical_id
        assert "LogGroup" in props["LoggingConfig"], logical_id
        env = props["Environment"]["Variables"]
        assert {
            "TABLE_NAME",
            "FINANCE_TOPIC_ARN",
            "TEAM_TOPIC_ARN",
            "ADMIN_TOPIC_ARN",
            "LEDGER_CONFIG",
        } <= set(env), logical_id
        config = LedgerConfig.model_validate_json(env["LEDGER_CONFIG"])
        assert config == synthesized.settings.ledger


def test_ledger_config_is_the_cdk_json_context(synthesized: Synthesized) -> None:
    from conftest import cdk_json_context

    assert synthesized.settings.ledger == LedgerConfig.model_validate(cdk_json_context()["ledger"])
    assert json.loads(synthesized.settings.ledger.model_dump_json())["tracking"]["job_tag_keys"]


def test_layers_are_arm64_python311(synthesized: Synthesized) -> None:
    layers = synthesized.resources("AWS::Lambda::LayerVersion").values()
    assert len(layers) == 2
    for layer in layers:
        assert layer["Properties"]["CompatibleRuntimes"] == ["python3.11"]
        assert layer["Properties"]["CompatibleArchitectures"] == ["arm64"]


def test_only_the_parquet_functions_carry_the_pyarrow_layer(synthesized: Synthesized) -> None:
    """The catalog's ``uses_pyarrow``: daily_summary (writes FOCUS) and reconcile (reads
    the Data Exports), and no other function pays for pyarrow's size."""
    (pyarrow,) = [
        x
        for x in synthesized.resources("AWS::Lambda::LayerVersion")
        if "/Functions/Pyarrow/" in synthesized.path_of(x)
    ]
    carrying = sorted(
        name
        for name in ALL_FUNCTIONS
        if {"Ref": pyarrow}
        in synthesized.json["Resources"][function_id(synthesized, name)]["Properties"]["Layers"]
    )
    assert carrying == sorted(f.name for f in FUNCTIONS if f.uses_pyarrow)
    assert carrying == ["daily_summary", "reconcile"]


def test_every_log_group_has_retention(synthesized: Synthesized) -> None:
    groups = synthesized.resources("AWS::Logs::LogGroup")
    assert len(groups) == len(ALL_FUNCTIONS) + 1  # + API access logs
    for logical_id, group in groups.items():
        assert group["Properties"].get("RetentionInDays") == (
            synthesized.settings.log_retention_days
        ), logical_id


def test_topics_are_kms_encrypted_and_tls_only(synthesized: Synthesized) -> None:
    topics = synthesized.resources("AWS::SNS::Topic")
    assert len(topics) == 3
    for logical_id, topic in topics.items():
        assert topic["Properties"].get("KmsMasterKeyId"), logical_id
    tls_only = set()
    for policy in synthesized.resources("AWS::SNS::TopicPolicy").values():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            if statement["Effect"] == "Deny" and statement.get("Condition") == {
                "Bool": {"aws:SecureTransport": "false"}
            }:
                tls_only |= {t["Ref"] for t in policy["Properties"]["Topics"]}
    assert tls_only == set(topics)


def test_reports_bucket_is_versioned_encrypted_private_ssl_only_with_lifecycle(
    synthesized: Synthesized,
) -> None:
    buckets = synthesized.resources("AWS::S3::Bucket")
    (reports,) = [b for k, b in buckets.items() if "/Reports/Reports/" in synthesized.path_of(k)]
    props = reports["Properties"]
    assert props["VersioningConfiguration"] == {"Status": "Enabled"}
    assert props["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    assert props["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True,
        "BlockPublicPolicy": True,
        "IgnorePublicAcls": True,
        "RestrictPublicBuckets": True,
    }
    assert props["LifecycleConfiguration"]["Rules"]
    assert "LoggingConfiguration" in props
    assert reports["DeletionPolicy"] == "Retain"
    policies = synthesized.resources("AWS::S3::BucketPolicy")
    assert any("aws:SecureTransport" in json.dumps(p) for p in policies.values())


def test_only_the_daily_summary_writes_reports(synthesized: Synthesized) -> None:
    for name in ALL_FUNCTIONS:
        puts = _statements_with(synthesized, name, "s3:PutObject")
        assert bool(puts) == (name == "daily_summary"), name


def test_dashboard_shows_the_tracker_and_spend(synthesized: Synthesized) -> None:
    (dashboard,) = synthesized.resources("AWS::CloudWatch::Dashboard").values()
    body = json.dumps(dashboard["Properties"]["DashboardBody"])
    for needle in (
        "EventsRejected",
        "ApproximateNumberOfMessagesVisible",
        "TickLagSeconds",
        "AlertsSent",
        "DailySpendUSD",
        "Errors",
    ):
        assert needle in body, needle


def test_reconcile_reads_only_the_configured_data_exports_prefix(featured: Synthesized) -> None:
    """ledger.reconcile.data_exports_bucket/prefix: list that prefix, get its objects."""
    statements = [
        statement
        for logical_id, policy in featured.resources("AWS::IAM::Policy").items()
        if "reconcile" in featured.path_of(logical_id).lower()
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        if str(statement["Action"]).startswith("s3:")
    ]
    by_action = {s["Action"]: s for s in statements}
    assert set(by_action) == {"s3:GetObject", "s3:ListBucket"}
    assert by_action["s3:GetObject"]["Resource"] == "arn:aws:s3:::cur-exports/cur2/costtracker*"
    assert by_action["s3:ListBucket"]["Condition"] == {
        "StringLike": {"s3:prefix": ["cur2/costtracker*"]}
    }
