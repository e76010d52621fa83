"""The organisation's onboarding (``-c stacks=stacksets``): the member stacks as two
service-managed StackSets with automatic deployment, so every account that joins one of
the chosen OUs (``member.organizational_units``) gets them, and an account that leaves
loses them.

- ``CostTrackerMemberRoles``: the once-per-account part (IAM is global), in one region
  (the tracker's);
- ``CostTrackerMemberRules``: the per-region part, in every region of
  ``member.regions``, after the roles (it forwards with the roles part's role).

Deployed from the management account (``member.call_as`` SELF) or from a StackSets
delegated administrator account with trusted access on (DELEGATED_ADMIN). A
service-managed StackSet never deploys to the management account itself: a tracker
there, or workloads there, are not members. Each template is synthesized here from the
same constructs as the single-account member stack, environment-agnostic and without
assets (no bootstrap needed in the member accounts).
"""

from __future__ import annotations

import json
import tempfile
from typing import Any

from aws_cdk import App, BootstraplessSynthesizer, CfnOutput, Stack
from aws_cdk import aws_cloudformation as cfn
from constructs import Construct

from cdk.member_stack import MemberRolesStack, MemberRulesStack
from cdk.stack_settings import StackSettings

ROLES_STACKSET = "CostTrackerMemberRoles"
RULES_STACKSET = "CostTrackerMemberRules"
PARTS = {ROLES_STACKSET: "roles (once per account)", RULES_STACKSET: "event rules (per region)"}


def member_templates(settings: StackSettings) -> dict[str, dict[str, Any]]:
    """The two parts' templates (JSON), synthesized in an app of their own."""
    with tempfile.TemporaryDirectory() as outdir:
        app = App(outdir=outdir)
        MemberRolesStack(
            app, ROLES_STACKSET, settings=settings, synthesizer=BootstraplessSynthesizer()
        )
        MemberRulesStack(
            app, RULES_STACKSET, settings=settings, synthesizer=BootstraplessSynthesizer()
        )
        assembly = app.synth()
        return {
            name: dict(assembly.get_stack_by_name(name).template)
            for name in (ROLES_STACKSET, RULES_STACKSET)
        }


class OrgStackSetsStack(Stack):
    def __init__(
        self, scope: Construct, construct_id: str, *, settings: StackSettings, **kwargs: Any
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        member = settings.member
        if not member.organizational_units:
            raise ValueError("stacks=stacksets needs member.organizational_units (ou-... or r-...)")
        templates = member_templates(settings)
        self.stack_sets: dict[str, cfn.CfnStackSet] = {}
        for name, regions in (
            (ROLES_STACKSET, (settings.region,)),
            (RULES_STACKSET, member.regions or (settings.region,)),
        ):
            self.stack_sets[name] = cfn.CfnStackSet(
                self,
                name,
                stack_set_name=name,
                description=f"costtracker member accounts: {PARTS[name]}",
                permission_model="SERVICE_MANAGED",
                call_as=member.call_as,
                auto_deployment=cfn.CfnStackSet.AutoDeploymentProperty(
                    enabled=True, retain_stacks_on_account_removal=False
                ),
                managed_execution={"Active": True},
                capabilities=["CAPABILITY_NAMED_IAM"],
                operation_preferences=cfn.CfnStackSet.OperationPreferencesProperty(
                    failure_tolerance_percentage=10,
                    max_concurrent_percentage=25,
                    region_concurrency_type="PARALLEL",
                ),
                stack_instances_group=[
                    cfn.CfnStackSet.StackInstancesProperty(
                        deployment_targets=cfn.CfnStackSet.DeploymentTargetsProperty(
                            organizational_unit_ids=list(member.organizational_units)
                        ),
                        regions=list(regions),
                    )
                ],
                template_body=json.dumps(templates[name], separators=(",", ":")),
            )
        self.stack_sets[RULES_STACKSET].node.add_dependency(self.stack_sets[ROLES_STACKSET])
        CfnOutput(
            self,
            "MemberOrganizationalUnits",
            value=",".join(member.organizational_units),
            description="New accounts in these OUs get the member roles and rules automatically",
        )
