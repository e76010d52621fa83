"""Every client error in the one shape of ``shared.api.errors``: the exception handlers
of the resolver, and the 415 for a body that is not JSON (answered before resolving)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, cast

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.exceptions import NotFoundError, ServiceError
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError

from shared.api.errors import ApiProblem, from_validation_errors

Handler = Callable[[Any], Response[dict[str, Any]]]


def problem_response(problem: ApiProblem) -> Response[dict[str, Any]]:
    return Response(
        status_code=problem.status,
        content_type=content_types.APPLICATION_JSON,
        body=problem.body(),
    )


def register(app: APIGatewayRestResolver) -> None:
    """Answer ApiProblem, bad input (400, never 422), Powertools' own client errors and
    an unknown route in the one shape."""

    def api_problem(problem: ApiProblem) -> Response[dict[str, Any]]:
        return problem_response(problem)

    def invalid_request(error: RequestValidationError) -> Response[dict[str, Any]]:
        """400 naming each bad parameter or field and why (pydantic's rule, never the input)."""
        return problem_response(from_validation_errors(error.errors()))

    def service_error(error: ServiceError) -> Response[dict[str, Any]]:
        """Powertools' own client errors (e.g. a body it cannot read), in the same shape."""
        status = error.status_code if 400 <= error.status_code < 500 else 400
        return problem_response(ApiProblem(status, str(error.msg)))

    def no_route(error: NotFoundError) -> Response[dict[str, Any]]:
        method = app.current_event.http_method
        return problem_response(
            ApiProblem(404, f"no {method} route at this path: /openapi.json lists the API's routes")
        )

    # Powertools' registration decorator is untyped: typed here once.
    on = cast("Callable[[type[Exception]], Callable[[Handler], Handler]]", app.exception_handler)
    on(ApiProblem)(api_problem)
    on(RequestValidationError)(invalid_request)
    on(ServiceError)(service_error)
    on(NotFoundError)(no_route)


def unsupported_body(event: Mapping[str, Any]) -> dict[str, Any] | None:
    """A body that is not JSON is a 415 here, before the resolver tries to parse it (a
    PUT or POST declaring another type is one even when empty: the resolver would try to
    parse it as that type)."""
    headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    if not event.get("body") and not (
        event.get("httpMethod") in ("PUT", "POST", "PATCH") and "content-type" in headers
    ):
        return None
    content_type = str(headers.get("content-type", "application/json")).lower()
    if content_type.split(";")[0].strip() in ("application/json", ""):
        return None
    problem = ApiProblem(415, "send the body as application/json", "Content-Type")
    return {
        "statusCode": 415,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps(problem.body()),
        "isBase64Encoded": False,
    }
