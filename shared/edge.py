"""The handlers' edge: parse an event into its model or fail loudly with its id.

A malformed event is logged with its id and the validation errors, then
raised: Lambda's async retries end in the function's dead-letter queue with
the original event, and replay reports it. Nothing is half-applied.
"""

from __future__ import annotations

from typing import Any, TypeVar

from aws_lambda_powertools import Logger
from pydantic import BaseModel, ValidationError

from shared.event_envelope import event_id_of
from shared.telemetry import count

M = TypeVar("M", bound=BaseModel)


class MalformedEvent(ValueError):
    def __init__(self, event_id: str, detail: str) -> None:
        super().__init__(f"malformed event {event_id}: {detail}")
        self.event_id = event_id
        self.detail = detail


def parse_event(raw: Any, model: type[M], logger: Logger) -> M:
    event_id = event_id_of(raw)
    if not isinstance(raw, dict):
        logger.error("event is not a JSON object", extra={"event_id": event_id})
        count("EventsRejected")
        raise MalformedEvent(event_id, "not a JSON object")
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        errors = [
            {"loc": ".".join(str(p) for p in e["loc"]), "msg": e["msg"]} for e in exc.errors()
        ]
        logger.error("event failed validation", extra={"event_id": event_id, "errors": errors})
        count("EventsRejected")
        summary = "; ".join(f"{e['loc']}: {e['msg']}" for e in errors)
        raise MalformedEvent(event_id, summary) from exc
