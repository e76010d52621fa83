"""The job-cost API's resolver: the routers, caller resolution as middleware, and every
client error in one shape (API Gateway REST, IAM auth).

Bad input is a 400 naming the parameter or field, never echoing the input; a denied job
403, an unknown one 404; a budget defined in CDK context is not changed here (409).
Access fails closed: a caller no ``ledger.access`` rule matches (every caller, with no
rules) gets 403 on every route. Costs are accrued to the clock's now.
"""

from __future__ import annotations

from aws_lambda_powertools.event_handler import APIGatewayRestResolver

from shared.api import accounts, budgets, error_handlers, insights, jobs, summaries
from shared.api.caller import resolve_caller


def build_app() -> APIGatewayRestResolver:
    app = APIGatewayRestResolver(enable_validation=True)
    app.use([resolve_caller])
    for module in (jobs, insights, budgets, summaries, accounts):
        app.include_router(module.router)
    error_handlers.register(app)
    return app
