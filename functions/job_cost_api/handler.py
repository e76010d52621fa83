"""The job-cost API (API Gateway REST, IAM auth): wiring only. The routes are in
``shared.api`` (one router per resource), resolved by ``shared.api.app``."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared.api.app import build_app
from shared.api.caller import RUNTIME
from shared.api.error_handlers import unsupported_body
from shared.app import runtime

logger = Logger(service="costtracker")
app = build_app()


@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    refused = unsupported_body(event)
    if refused is not None:
        return refused
    app.context[RUNTIME] = runtime.current()  # the resolver clears it when the request ends
    return app.resolve(event, context)
