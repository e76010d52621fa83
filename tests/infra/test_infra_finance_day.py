"""The finance day's schedules (cost rule 12): outside UTC the day boundary and the daily
summary are EventBridge Scheduler schedules on the finance time zone's clock (rules' cron
is UTC only), invoking their function with a schedule event, retried into its DLQ, through
a role that may invoke only those functions; in UTC they stay rules."""

from __future__ import annotations

import json
from typing import Any

from conftest import Synthesized

FINANCE_DAY = ("day_boundary", "daily_summary")


def _function_id(synthesized: Synthesized, name: str) -> str:
    pascal = "".join(part.capitalize() for part in name.split("_"))
    (found,) = [
        logical_id
        for logical_id in synthesized.resources("AWS::Lambda::Function")
        if logical_id.startswith(f"Functions{pascal}Function")
    ]
    return found


def _schedules(synthesized: Synthesized) -> dict[str, dict[str, Any]]:
    out = {}
    for resource in synthesized.resources("AWS::Scheduler::Schedule").values():
        props = resource["Properties"]
        out[props["Target"]["Arn"]["Fn::GetAtt"][0]] = props
    return out


def test_seoul_finance_day_runs_on_the_scheduler_in_its_zone(featured: Synthesized) -> None:
    schedules = _schedules(featured)
    expected = {"day_boundary": "cron(0 0 * * ? *)", "daily_summary": "cron(15 0 * * ? *)"}
    assert len(schedules) == 2
    for name, expression in expected.items():
        props = schedules[_function_id(featured, name)]
        assert props["ScheduleExpression"] == expression
        assert props["ScheduleExpressionTimezone"] == "Asia/Seoul"
        assert props["FlexibleTimeWindow"] == {"Mode": "OFF"}  # on the boundary, no window
        target = props["Target"]
        assert target["RetryPolicy"] == {
            "MaximumEventAgeInSeconds": 3600,
            "MaximumRetryAttempts": 2,
        }
        assert "DeadLetterQueue" in target["DeadLetterConfig"]["Arn"]["Fn::GetAtt"][0]
        tick = json.loads(target["Input"])
        assert tick["detail-type"] == "Scheduled Event"
        assert tick["source"] == "aws.scheduler"
        assert tick["time"] == "<aws.scheduler.scheduled-time>"


def test_scheduler_role_is_for_the_scheduler_of_this_account_and_invokes_only_those(
    featured: Synthesized,
) -> None:
    roles = {
        logical_id: r
        for logical_id, r in featured.resources("AWS::IAM::Role").items()
        if "scheduler.amazonaws.com" in json.dumps(r["Properties"]["AssumeRolePolicyDocument"])
    }
    (role_id,) = roles
    (statement,) = roles[role_id]["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert statement["Condition"] == {"StringEquals": {"aws:SourceAccount": "123456789012"}}
    policies = [
        p["Properties"]["PolicyDocument"]["Statement"]
        for p in featured.resources("AWS::IAM::Policy").values()
        if {"Ref": role_id} in p["Properties"]["Roles"]
    ]
    (statements,) = policies
    actions = {s["Action"] for s in statements}
    assert actions == {"lambda:InvokeFunction", "sqs:SendMessage"}
    invoked = json.dumps(
        [s["Resource"] for s in statements if s["Action"] == "lambda:InvokeFunction"]
    )
    for name in FINANCE_DAY:
        assert _function_id(featured, name) in invoked
    others = [
        logical_id
        for logical_id in featured.resources("AWS::Lambda::Function")
        if logical_id not in {_function_id(featured, n) for n in FINANCE_DAY}
    ]
    assert not any(f'"{other}"' in invoked for other in others)


def test_utc_finance_day_keeps_eventbridge_rules(synthesized: Synthesized) -> None:
    assert synthesized.resources("AWS::Scheduler::Schedule") == {}
    expressions = {
        r["Properties"].get("ScheduleExpression")
        for r in synthesized.resources("AWS::Events::Rule").values()
    }
    assert {"cron(0 0 * * ? *)", "cron(15 0 * * ? *)"} <= expressions
