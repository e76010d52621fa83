"""The member-account stack (``-c stacks=member``), for one account by hand: its
once-per-account part (``cdk/constructs/member_roles.py``: the role the tracker assumes
there, the forwarding role) and its per-region part (``cdk/constructs/member_rules.py``:
the rules that forward events to the tracker's default bus), with the checkpoint
buckets' EventBridge notifications turned on.

An organisation gets the same two parts as two service-managed StackSets instead
(``-c stacks=stacksets``, ``cdk/org_stacksets.py``): roles once per account, rules in
every chosen region. Deploy the tracker stack first: the member role trusts the tracker
role by its exact ARN, which IAM checks when it makes the member role.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, Stack
from constructs import Construct

from cdk.constructs.checkpoint_buckets import CheckpointBuckets
from cdk.constructs.member_roles import MemberRoles
from cdk.constructs.member_rules import MemberRules
from cdk.constructs.member_rules import member_patterns as member_patterns
from cdk.stack_settings import StackSettings


class CostTrackerMemberStack(Stack):
    def __init__(
        self, scope: Construct, construct_id: str, *, settings: StackSettings, **kwargs: Any
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        where = {"tracker_account": settings.account, "tracker_region": settings.region}
        roles = MemberRoles(self, "Roles", ledger=settings.ledger, **where)
        self.read_role = roles.role
        member_rules = MemberRules(
            self,
            "Rules",
            ledger=settings.ledger,
            checkpoint_buckets=settings.member.checkpoint_buckets,
            forward_role=roles.forward_role,
            **where,
        )
        self.rules = member_rules.rules
        CheckpointBuckets(self, "CheckpointBuckets", buckets=settings.member.checkpoint_buckets)
        CfnOutput(
            self,
            "ReadRoleArn",
            value=self.read_role.role_arn,
            description="The role the tracker assumes in this account",
        )


class MemberRolesStack(Stack):
    """The once-per-account part alone (the roles StackSet's template)."""

    def __init__(
        self, scope: Construct, construct_id: str, *, settings: StackSettings, **kwargs: Any
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        MemberRoles(
            self,
            "Roles",
            ledger=settings.ledger,
            tracker_account=settings.account,
            tracker_region=settings.region,
        )


class MemberRulesStack(Stack):
    """The per-region part alone (the rules StackSet's template); checkpoint buckets by
    the naming rule (``member.checkpoint_bucket_rule``: ``{account}``, ``{region}``)."""

    def __init__(
        self, scope: Construct, construct_id: str, *, settings: StackSettings, **kwargs: Any
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        rule = settings.member.checkpoint_bucket_rule
        buckets = (rule.format(account=self.account, region=self.region),) if rule else ()
        MemberRules(
            self,
            "Rules",
            ledger=settings.ledger,
            checkpoint_buckets=buckets,
            tracker_account=settings.account,
            tracker_region=settings.region,
        )
