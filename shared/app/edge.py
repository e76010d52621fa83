"""The handlers' edge: parse an event into its model or fail loudly with its id.

A malformed event is logged with its id and the validation errors, then
raised: Lambda's async retries end in the function's dead-letter queue with
the original event, and replay reports it. Nothing is half-applied.

A function that takes several detail-types parses with a ``TypeAdapter`` of a
discriminated union (``Field(discriminator="detail_type")``, built on first use):
its errors are reported as the member's own would be (without the tag in front).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from aws_lambda_powertools import Logger
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from shared.adapters.telemetry import count
from shared.events.envelope import event_id_of

M = TypeVar("M", bound=BaseModel)
_TAG_ERRORS = ("union_tag_invalid", "union_tag_not_found")


class MalformedEvent(ValueError):
    def __init__(self, event_id: str, detail: str) -> None:
        super().__init__(f"malformed event {event_id}: {detail}")
        self.event_id = event_id
        self.detail = detail


def _loc(error: ErrorDetails, raw: Mapping[object, object], union: bool) -> str:
    loc = error["loc"]
    if union and error["type"] in _TAG_ERRORS:
        return "detail-type"
    if union and loc and loc[0] == raw.get("detail-type"):
        loc = loc[1:]  # the member's own path: "detail.object.size", as a single model says
    return ".".join(str(p) for p in loc)


def parse_event(raw: object, model: type[M] | TypeAdapter[M], logger: Logger) -> M:
    """``raw`` as ``model``; the event's id is read for the log only when it fails."""
    if not isinstance(raw, dict):
        event_id = event_id_of(raw)
        logger.error("event is not a JSON object", extra={"event_id": event_id})
        count("EventsRejected")
        raise MalformedEvent(event_id, "not a JSON object")
    try:
        if isinstance(model, TypeAdapter):
            return model.validate_python(raw)
        return model.model_validate(raw)
    except ValidationError as exc:
        event_id = event_id_of(raw)
        union = isinstance(model, TypeAdapter)
        errors = [{"loc": _loc(e, raw, union), "msg": e["msg"]} for e in exc.errors()]
        logger.error("event failed validation", extra={"event_id": event_id, "errors": errors})
        count("EventsRejected")
        summary = "; ".join(f"{e['loc']}: {e['msg']}" for e in errors)
        raise MalformedEvent(event_id, summary) from exc
