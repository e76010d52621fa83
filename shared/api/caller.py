"""Caller resolution as middleware: every route runs with the caller's access policy in
the resolver's context (IAM auth: API Gateway verified the SigV4 signature), beside the
container's runtime the handler put there (``runtime_of(router)``: routes are handed
their dependencies as event functions are). A caller
no ``ledger.access`` rule matches gets 403 on every route (after the request's own
validation, as before)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.api_gateway import BaseRouter, Router
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware

from shared.api.policy import AccessPolicy, policy_for

if TYPE_CHECKING:
    from shared.app.runtime import Runtime

_KEY = "access"
RUNTIME = "runtime"


def resolve_caller(app: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Response[Any]:
    """Who is asking, as the policy of what they may see (``access(router)`` in a route)."""
    arn = app.current_event.request_context.identity.user_arn
    app.context[_KEY] = policy_for(arn, runtime_of(app).settings.config.access)
    return next_middleware(app)


def new_router() -> Router:
    """A router for one resource (Powertools' constructor is untyped: typed here once)."""
    return cast("Callable[[], Router]", Router)()


def access(router: BaseRouter) -> AccessPolicy:
    """The caller's access policy, set by ``resolve_caller`` for this request."""
    policy = router.context.get(_KEY)
    if not isinstance(policy, AccessPolicy):  # a route outside the app's middleware
        raise RuntimeError("no caller resolved: include the router in shared.api.app")
    return policy


def runtime_of(router: BaseRouter) -> Runtime:
    """The runtime this request is answered with, handed in by the handler
    (``functions.job_cost_api.handler``) through the resolver's context."""
    found: Runtime | None = router.context.get(RUNTIME)
    if found is None:  # a resolve outside the handler
        raise RuntimeError("no runtime in the resolver's context: resolve through the handler")
    return found
