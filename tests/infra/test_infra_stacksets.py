"""The organisation's onboarding: the member stacks as two service-managed StackSets
with automatic deployment to the chosen OUs (roles once per account, rules per region),
their templates those of the member constructs, cdk-nag clean."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk.assertions import Template
from conftest import cdk_json_context

from cdk.app import build_app
from cdk.stack_settings import StackSettings

STACKSET_CONTEXT = {
    "stacks": "tracker,stacksets",
    "ledger.accounts.organization_id": "o-abcdef1234",
    "member.organizational_units": "ou-ab12-abcdefgh,ou-ab12-ijklmnop",
    "member.regions": "us-east-1,eu-west-1,ap-northeast-1",
    "member.checkpoint_bucket_rule": "ckpt-{account}-{region}",
}


@pytest.fixture(scope="module")
def stack_sets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    outdir = tmp_path_factory.mktemp("stacksets.out")
    app, _, _ = build_app(cdk_json_context(**STACKSET_CONTEXT), outdir=str(outdir), nag=False)
    stack = app.node.find_child("CostTrackerMemberStackSets")
    assert isinstance(stack, Stack)
    template = Template.from_stack(stack).to_json()
    return {
        r["Properties"]["StackSetName"]: r
        for r in template["Resources"].values()
        if r["Type"] == "AWS::CloudFormation::StackSet"
    }


def test_two_service_managed_stack_sets_deploy_to_new_accounts_of_the_ous(
    stack_sets: dict[str, dict[str, Any]],
) -> None:
    assert set(stack_sets) == {"CostTrackerMemberRoles", "CostTrackerMemberRules"}
    for resource in stack_sets.values():
        props = resource["Properties"]
        assert props["PermissionModel"] == "SERVICE_MANAGED"
        assert props["AutoDeployment"] == {"Enabled": True, "RetainStacksOnAccountRemoval": False}
        assert props["Capabilities"] == ["CAPABILITY_NAMED_IAM"]
        (group,) = props["StackInstancesGroup"]
        assert group["DeploymentTargets"] == {
            "OrganizationalUnitIds": ["ou-ab12-abcdefgh", "ou-ab12-ijklmnop"]
        }
    roles, rules = stack_sets["CostTrackerMemberRoles"], stack_sets["CostTrackerMemberRules"]
    # IAM is global: the roles once per account (one region); the rules in every region.
    assert roles["Properties"]["StackInstancesGroup"][0]["Regions"] == ["us-east-1"]
    assert rules["Properties"]["StackInstancesGroup"][0]["Regions"] == [
        "us-east-1",
        "eu-west-1",
        "ap-northeast-1",
    ]
    # The rules forward with the roles part's role: deployed after it.
    assert rules["DependsOn"] == ["CostTrackerMemberRoles"]


def test_the_roles_template_holds_the_roles_and_the_rules_template_the_rules(
    stack_sets: dict[str, dict[str, Any]],
) -> None:
    roles = json.loads(stack_sets["CostTrackerMemberRoles"]["Properties"]["TemplateBody"])
    rules = json.loads(stack_sets["CostTrackerMemberRules"]["Properties"]["TemplateBody"])
    kinds = {r["Type"] for r in roles["Resources"].values()}
    assert kinds == {"AWS::IAM::Role", "AWS::IAM::Policy"}
    names = {r["Properties"].get("RoleName") for r in roles["Resources"].values()}
    assert {"costtracker-member-read", "costtracker-member-forward"} <= names
    assert {r["Type"] for r in rules["Resources"].values()} == {"AWS::Events::Rule"}
    # No bootstrap in member accounts: neither template has assets or the bootstrap check.
    for template in (roles, rules):
        assert "BootstrapVersion" not in template.get("Parameters", {})
    # Checkpoint buckets by the naming rule, per account and region.
    (checkpoint,) = [
        r["Properties"]
        for r in rules["Resources"].values()
        if "Object Created" in r["Properties"]["EventPattern"]["detail-type"]
    ]
    assert checkpoint["EventPattern"]["detail"]["bucket"]["name"] == [
        {"Fn::Join": ["", ["ckpt-", {"Ref": "AWS::AccountId"}, "-", {"Ref": "AWS::Region"}]]}
    ]
    # Every rule forwards with the roles part's forwarding role, by its fixed name.
    for rule in rules["Resources"].values():
        assert "role/costtracker-member-forward" in json.dumps(rule["Properties"]["Targets"])


def test_stacksets_need_the_ous() -> None:
    with pytest.raises(ValueError, match="organizational_units"):
        build_app(cdk_json_context(stacks="stacksets"), nag=False)


def test_stacksets_are_nag_clean(tmp_path: Path) -> None:
    app, _, _ = build_app(cdk_json_context(**STACKSET_CONTEXT), outdir=str(tmp_path), nag=True)
    try:
        app.synth()
    except RuntimeError as error:
        if "Validation failed" not in str(error):
            raise
    report = json.loads((tmp_path / "validation-report.json").read_text())
    (plugin,) = [p for p in report["pluginReports"] if p["pluginName"] == "AwsSolutions"]
    assert plugin["violations"] == [] and plugin["conclusion"] == "success"


def test_a_bad_ou_id_stops_synth() -> None:
    with pytest.raises(ValueError, match="not an OU"):
        StackSettings.model_validate(
            {
                "account": "123456789012",
                "region": "us-east-1",
                "member": {"organizational_units": ["x"]},
            }
        )


def test_an_allow_list_opens_the_bus_and_the_tracker_role_to_those_accounts_only(
    tmp_path: Path,
) -> None:
    context = cdk_json_context(**{"ledger.accounts.allowed_accounts": "111122223333,444455556666"})
    _, tracker, _ = build_app(context, outdir=str(tmp_path), nag=False)
    template = Template.from_stack(tracker).to_json()
    (policy,) = [
        r["Properties"] for r in template["Resources"].values()
        if r["Type"] == "AWS::Events::EventBusPolicy"
    ]  # fmt: skip
    principals = json.dumps(policy["Statement"]["Principal"])
    assert "111122223333:root" in principals and "444455556666:root" in principals
    assert "Condition" not in policy["Statement"]
    (role,) = [
        k for k, r in template["Resources"].items()
        if r["Type"] == "AWS::IAM::Role"
        and r["Properties"].get("RoleName") == "costtracker-tracker"
    ]  # fmt: skip
    (statement,) = [
        s
        for r in template["Resources"].values()
        if r["Type"] == "AWS::IAM::Policy" and {"Ref": role} in r["Properties"]["Roles"]
        for s in r["Properties"]["PolicyDocument"]["Statement"]
    ]
    resources = json.dumps(statement["Resource"])
    assert resources.count("role/costtracker-member-read") == 2
    assert "111122223333" in resources and "iam::*" not in resources
