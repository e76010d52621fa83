"""One managed IAM policy per API audience, to attach to their roles: execute-api:Invoke
on the routes that audience uses. IAM lets a caller reach a route; ``ledger.access``
rules (matched on the caller's ARN) then decide what the handler shows them.

| policy | routes |
|---|---|
| team reader | GET /jobs, /jobs/*, /compare, /idle, /change, /efficiency, /prices, /budgets |
| finance | GET on every route, PUT and DELETE /budgets/*, POST /budgets/*/actions/*/release |
| admin | every method on every route |
"""

from __future__ import annotations

from aws_cdk import Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_iam as iam
from constructs import Construct

from cdk.constructs.job_cost_api import STAGE
from cdk.nag import acknowledge

ROUTES: dict[str, tuple[tuple[str, str], ...]] = {
    "team": (
        ("GET", "/jobs"),
        ("GET", "/jobs/*"),
        ("GET", "/compare"),
        ("GET", "/idle"),
        ("GET", "/change"),
        ("GET", "/efficiency"),
        ("GET", "/prices"),
        ("GET", "/budgets"),
    ),
    "finance": (
        ("GET", "/*"),
        ("GET", "/"),
        ("PUT", "/budgets/*"),
        ("DELETE", "/budgets/*"),
        ("POST", "/budgets/*/actions/*/release"),
    ),
    "admin": (("*", "/*"), ("*", "/")),
}


class ApiAccessPolicies(Construct):
    AUDIENCE = {"team": "team members", "finance": "finance", "admin": "the tracker's admins"}

    def __init__(self, scope: Construct, construct_id: str, *, api: apigw.RestApi) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        self.policies: dict[str, iam.ManagedPolicy] = {}
        for role, routes in ROUTES.items():
            resources = [api.arn_for_execute_api(method, path, STAGE) for method, path in routes]
            policy = iam.ManagedPolicy(
                self,
                f"{role.capitalize()}Policy",
                description=f"costtracker API access for {self.AUDIENCE[role]} "
                "(what they see is decided by ledger.access)",
                statements=[
                    iam.PolicyStatement(actions=["execute-api:Invoke"], resources=resources)
                ],
            )
            self.policies[role] = policy
            api_id = stack.resolve(api.rest_api_id)["Ref"]
            for method, path in routes:
                if "*" not in method + path:
                    continue
                acknowledge(
                    policy,
                    "IAM5",
                    f"execute-api:Invoke on this API's {method} {path} routes only (stage "
                    f"{STAGE}): the routes of the {role} audience, by path prefix.",
                    finding=f"Resource::arn:<AWS::Partition>:execute-api:{stack.region}:"
                    f"{stack.account}:<{api_id}>/{STAGE}/{method}{path}",
                )
