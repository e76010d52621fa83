"""Hardening of the template: reserved concurrency, API throttling, least-privilege
table access, permissions only for features that are on, per-audience API policies,
and the organisation's access to the event bus."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import Synthesized
from test_infra_stack import (
    ALL_FUNCTIONS,
    ASYNC_FUNCTIONS,
    _as_list,
    actions_of,
    function_id,
    role_statements,
)

from shared.app.functions import BY_NAME

FORBIDDEN_TABLE_ACTIONS = {"dynamodb:Scan", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"}


def _function(synthesized: Synthesized, name: str) -> dict[str, Any]:
    return dict(synthesized.json["Resources"][function_id(synthesized, name)]["Properties"])


@pytest.mark.parametrize("name", ALL_FUNCTIONS)
def test_event_path_functions_have_reserved_concurrency(
    synthesized: Synthesized, featured: Synthesized, name: str
) -> None:
    reserved = _function(synthesized, name).get("ReservedConcurrentExecutions")
    configured = _function(featured, name).get("ReservedConcurrentExecutions")
    if BY_NAME[name].event_path:
        assert (reserved, configured) == (synthesized.settings.event_reserved_concurrency, 3)
    elif name == "job_cost_api":  # its own (api_reserved_concurrency), default 10
        assert (reserved, configured) == (10, 4)
    else:
        assert (reserved, configured) == (None, None)


def test_api_reserved_concurrency_zero_reserves_none(synthesized: Synthesized) -> None:
    from cdk.stack import reserved_concurrency

    def settings(reserved: int) -> Any:
        return synthesized.settings.model_copy(update={"api_reserved_concurrency": reserved})

    api, tick = BY_NAME["job_cost_api"], BY_NAME["budget_tick"]
    assert reserved_concurrency(settings(0), api) is None
    assert reserved_concurrency(settings(25), api) == 25
    assert reserved_concurrency(settings(25), tick) is None


def _stage(synthesized: Synthesized) -> dict[str, Any]:
    (stage,) = synthesized.resources("AWS::ApiGateway::Stage").values()
    return dict(stage["Properties"])


def test_api_stage_throttles_every_method(synthesized: Synthesized, featured: Synthesized) -> None:
    default = synthesized.settings.api_throttling
    for synth, (rate, burst) in (
        (synthesized, (default.rate_limit, default.burst_limit)),
        (featured, (7, 11)),
    ):
        (setting,) = [
            m for m in _stage(synth)["MethodSettings"]
            if m["HttpMethod"] == "*" and m["ResourcePath"] == "/*"
        ]  # fmt: skip
        assert setting["ThrottlingRateLimit"] == rate
        assert setting["ThrottlingBurstLimit"] == burst


@pytest.mark.parametrize("name", ALL_FUNCTIONS)
def test_no_role_may_scan_delete_or_batch_write(
    synthesized: Synthesized, featured: Synthesized, name: str
) -> None:
    for synth in (synthesized, featured):
        assert not actions_of(role_statements(synth, name)) & FORBIDDEN_TABLE_ACTIONS
    every_policy = json.dumps(
        [*synthesized.resources("AWS::IAM::Policy").values(),
         *synthesized.resources("AWS::IAM::ManagedPolicy").values()]
    )  # fmt: skip
    for action in FORBIDDEN_TABLE_ACTIONS:
        assert action not in every_policy


def test_stop_and_cost_explorer_only_when_their_features_are_on(
    synthesized: Synthesized, featured: Synthesized
) -> None:
    assert not synthesized.settings.ledger.auto_stop.enabled
    assert not synthesized.settings.ledger.reconcile.enabled
    for name in ALL_FUNCTIONS:
        actions = actions_of(role_statements(synthesized, name))
        assert "ec2:StopInstances" not in actions, name
        assert "ce:GetCostAndUsage" not in actions, name
    stoppers = {n for n in ALL_FUNCTIONS
                if "ec2:StopInstances" in actions_of(role_statements(featured, n))}  # fmt: skip
    # Auto-stop, and budget actions (ledger.budget_actions.enabled), through one stopper.
    assert stoppers == {"alarm_state", "alarm_sweep", "budget_tick", "budget_timer"}
    for name in stoppers:  # the stopper reads the instance's tags again before a stop
        assert "ec2:DescribeInstances" in actions_of(role_statements(featured, name)), name
    assert "ec2:DescribeInstances" not in actions_of(role_statements(synthesized, "alarm_sweep"))
    explorers = {n for n in ALL_FUNCTIONS
                 if "ce:GetCostAndUsage" in actions_of(role_statements(featured, n))}  # fmt: skip
    assert explorers == {"reconcile"}


def test_table_reads_never_include_scan(synthesized: Synthesized) -> None:
    for name in ASYNC_FUNCTIONS:
        reads = {a for a in actions_of(role_statements(synthesized, name)) if "dynamodb:" in a}
        assert {"dynamodb:GetItem", "dynamodb:Query"} <= reads, name


# --- per-audience API policies -------------------------------------------------------------


def _policy_routes(synthesized: Synthesized, audience: str) -> set[tuple[str, str]]:
    (policy,) = [
        p for logical_id, p in synthesized.resources("AWS::IAM::ManagedPolicy").items()
        if f"/ApiAccess/{audience.capitalize()}Policy/" in synthesized.path_of(logical_id)
    ]  # fmt: skip
    (statement,) = policy["Properties"]["PolicyDocument"]["Statement"]
    assert statement["Action"] == "execute-api:Invoke"
    routes = set()
    for resource in _as_list(statement["Resource"]):
        tail = resource["Fn::Join"][1][-1]  # "/v1/GET/jobs/*"
        _, stage, method, *path = tail.split("/")
        assert stage == "v1"
        routes.add((method, "/" + "/".join(path)))
    return routes


def test_one_managed_policy_per_audience_with_its_routes(synthesized: Synthesized) -> None:
    team = _policy_routes(synthesized, "team")
    assert team == {("GET", "/jobs"), ("GET", "/jobs/*"), ("GET", "/compare"),
                    ("GET", "/idle"), ("GET", "/change"),  # the dashboard's, team-scoped
                    ("GET", "/efficiency"),
                    ("GET", "/prices"), ("GET", "/budgets")}  # fmt: skip
    finance = _policy_routes(synthesized, "finance")
    assert {("PUT", "/budgets/*"), ("DELETE", "/budgets/*"), ("GET", "/*")} <= finance
    # Finance releases budget actions (the only POST it may call), never anything else.
    assert {(m, r) for m, r in finance if m == "POST"} == {
        ("POST", "/budgets/*/actions/*/release")
    }
    assert {m for m, _ in finance} == {"GET", "PUT", "DELETE", "POST"}
    assert ("*", "/*") in _policy_routes(synthesized, "admin")
    outputs = synthesized.json["Outputs"]
    for name in ("TeamPolicyArn", "FinancePolicyArn", "AdminPolicyArn", "ApiUrl"):
        assert name in outputs, name
    assert "--endpoint" in outputs["ApiUrl"]["Description"]


# --- the event bus and the organisation ------------------------------------------------------


def test_bus_accepts_put_events_only_from_the_organisation(
    synthesized: Synthesized, featured: Synthesized
) -> None:
    assert not synthesized.resources("AWS::Events::EventBusPolicy")
    (policy,) = featured.resources("AWS::Events::EventBusPolicy").values()
    statement = policy["Properties"]["Statement"]
    assert policy["Properties"]["EventBusName"] == "default"
    assert statement["Action"] == "events:PutEvents"
    assert statement["Principal"] == "*"
    assert statement["Condition"] == {"StringEquals": {"aws:PrincipalOrgID": "o-abcdef1234"}}
