"""Which tracker functions may assume the member accounts' read-only role, and on exactly
which resource (the role name of the settings, any account of the organisation)."""

from __future__ import annotations

import json

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
# Measured utilization is read in each instance's own account too (rule 10).
METRIC_READERS = {
    f.name for f in FUNCTIONS if "cloudwatch:GetMetricData" in f.grants.unscoped_reads
}
# Budget actions stop an instance or a training job in its own account.
BUDGET_ACTORS = {"budget_tick", "budget_timer"}


def test_describers_assume_exactly_the_member_role_in_the_organisation(
    featured: Synthesized,
) -> None:
    assert {
        "instance_state",
        "spot_interruption",
        "alarm_lifecycle",
        "alarm_state",
        "ledger_sweep",
        "fsx_refresh",  # DescribeFileSystems in each file system's own account
    } == DESCRIBERS
    assert {"metric_read", "daily_summary"} == METRIC_READERS
    for name in DESCRIBERS | METRIC_READERS | BUDGET_ACTORS:
        (statement,) = [
            s for s in role_statements(featured, name) if "sts:AssumeRole" in json.dumps(s)
        ]
        assert statement["Action"] == "sts:AssumeRole", name
        assert statement["Resource"] == {
            "Fn::Join": [
                "",
                ["arn:", {"Ref": "AWS::Partition"}, ":iam::*:role/costtracker-member-read"],
            ]
        }, name
        assert statement["Condition"] == {"StringEquals": {"aws:ResourceOrgID": "o-abcdef1234"}}
    for name in {f.name for f in FUNCTIONS} - DESCRIBERS - METRIC_READERS - BUDGET_ACTORS:
        assert "sts:AssumeRole" not in actions_of(role_statements(featured, name)), name


def test_without_an_organisation_no_function_assumes_any_role(synthesized: Synthesized) -> None:
    for name in ASYNC_FUNCTIONS:
        assert "sts:AssumeRole" not in actions_of(role_statements(synthesized, name)), name


def test_functions_know_the_member_role_name(featured: Synthesized) -> None:
    for function in featured.resources("AWS::Lambda::Function").values():
        variables = function["Properties"].get("Environment", {}).get("Variables", {})
        if "LEDGER_CONFIG" in variables:
            config = json.loads(variables["LEDGER_CONFIG"])
            assert config["accounts"]["member_role_name"] == "costtracker-member-read"
