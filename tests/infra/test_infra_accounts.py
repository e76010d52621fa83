"""Which tracker functions may assume the member accounts' read-only role, and on exactly
which resource (the role name of the settings, any account of the organisation)."""

from __future__ import annotations

import json
from typing import Any

from conftest import Synthesized
from test_infra_stack import actions_of, role_statements

from shared.app.function_grants import FSX_READ_ACTIONS, INSTANCE_READ_ACTIONS
from shared.app.functions import FUNCTIONS

ASYNC_FUNCTIONS = [f.name for f in FUNCTIONS if f.asynchronous]
# The functions that Describe instances or file systems (and so may need a member
# account's view).
DESCRIBERS = {
    f.name
    for f in FUNCTIONS
    if set(INSTANCE_READ_ACTIONS) <= set(f.grants.unscoped_reads)
    or set(FSX_READ_ACTIONS) <= set(f.grants.unscoped_reads)
}
# Alarms deleted, instances stopped, training jobs and reservations described, each in
# the resource's own account (docs/many-accounts.md).
ELSEWHERE = {"alarm_sweep", "training_job_state", "capacity_block", "reservation_refresh"}
# Measured utilization is read in each instance's own account too (rule 10).
METRIC_READERS = {
    f.name for f in FUNCTIONS if "cloudwatch:GetMetricData" in f.grants.unscoped_reads
}
# Budget actions stop an instance or a training job in its own account.
BUDGET_ACTORS = {"budget_tick", "budget_timer"}


TRACKER_ROLE = {
    "Fn::Join": [
        "",
        ["arn:", {"Ref": "AWS::Partition"}, ":iam::123456789012:role/costtracker-tracker"],
    ]
}


def test_describers_assume_exactly_the_tracker_role(featured: Synthesized) -> None:
    assert {
        "instance_state",
        "spot_interruption",
        "alarm_lifecycle",
        "alarm_state",
        "ledger_sweep",
        "sweep_worker",  # one unit of the organisation's sweep
        "fsx_refresh",  # DescribeFileSystems in each file system's own account
    } == DESCRIBERS
    assert {"metric_read", "daily_summary"} == METRIC_READERS
    for name in DESCRIBERS | METRIC_READERS | BUDGET_ACTORS | ELSEWHERE:
        (statement,) = [
            s for s in role_statements(featured, name) if "sts:AssumeRole" in json.dumps(s)
        ]
        assert statement["Action"] == "sts:AssumeRole", name
        assert statement["Resource"] == TRACKER_ROLE, name
        assert "Condition" not in statement
    for name in (
        {f.name for f in FUNCTIONS} - DESCRIBERS - METRIC_READERS - BUDGET_ACTORS - ELSEWHERE
    ):
        assert "sts:AssumeRole" not in actions_of(role_statements(featured, name)), name


def _tracker_role(featured: Synthesized) -> tuple[str, dict[str, Any]]:
    (found,) = [
        (logical_id, role)
        for logical_id, role in featured.resources("AWS::IAM::Role").items()
        if role["Properties"].get("RoleName") == "costtracker-tracker"
    ]
    return found


def test_the_tracker_role_is_assumed_by_exactly_the_member_reaching_functions(
    featured: Synthesized,
) -> None:
    _, role = _tracker_role(featured)
    (trust,) = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    principals = {p["Fn::GetAtt"][0] for p in trust["Principal"]["AWS"]}
    reaching = {
        name
        for name in {f.name for f in FUNCTIONS}
        if "sts:AssumeRole" in actions_of(role_statements(featured, name))
    }
    assert principals == {
        next(
            r
            for r in featured.resources("AWS::IAM::Role")
            if featured.path_of(r).endswith(f"/{_pascal(name)}/Role/Resource")
        )
        for name in reaching
    }


def test_the_tracker_role_assumes_the_member_role_in_the_organisation_only(
    featured: Synthesized,
) -> None:
    logical_id, _ = _tracker_role(featured)
    statements = [
        s
        for policy in featured.resources("AWS::IAM::Policy").values()
        if {"Ref": logical_id} in policy["Properties"]["Roles"]
        for s in policy["Properties"]["PolicyDocument"]["Statement"]
    ]
    (statement,) = statements
    assert statement["Action"] == "sts:AssumeRole"
    assert statement["Resource"] == {
        "Fn::Join": [
            "",
            ["arn:", {"Ref": "AWS::Partition"}, ":iam::*:role/costtracker-member-read"],
        ]
    }
    assert statement["Condition"] == {"StringEquals": {"aws:ResourceOrgID": "o-abcdef1234"}}


def _pascal(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def test_without_an_organisation_no_function_assumes_any_role(synthesized: Synthesized) -> None:
    for name in ASYNC_FUNCTIONS:
        assert "sts:AssumeRole" not in actions_of(role_statements(synthesized, name)), name


def test_functions_know_the_member_role_name(featured: Synthesized) -> None:
    for function in featured.resources("AWS::Lambda::Function").values():
        variables = function["Properties"].get("Environment", {}).get("Variables", {})
        if "LEDGER_CONFIG" in variables:
            config = json.loads(variables["LEDGER_CONFIG"])
            assert config["accounts"]["member_role_name"] == "costtracker-member-read"
