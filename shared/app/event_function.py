"""``@event_function(Model)``: the boilerplate of every event and scheduled function.

The decorated function takes the parsed event and the container's runtime and returns
the function's answer (a JSON object); the decorator adds, in this order:

- Powertools' logger context (Lambda context keys, state cleared per invocation) and
  the event's id as a log key;
- the parse at the edge (``shared.app.edge.parse_event``): a malformed event is logged
  with its id and raised, so Lambda's retries end in the function's dead-letter queue;
- the trust check (``shared.app.trust_edge.admit``): an event from an account the
  tracker does not act for is refused the same way;
- the metrics flush at the end of the invocation, whatever happened, where metrics go
  somewhere (with metrics off, local runs and tests, the flush would only warn that
  there is nothing to publish: nothing is counted then, ``shared.adapters.telemetry``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Generic, TypeVar

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, TypeAdapter

from shared.adapters import telemetry
from shared.adapters.telemetry import metrics
from shared.app import runtime
from shared.app.edge import parse_event
from shared.app.trust_edge import admit

logger = Logger(service="costtracker")

M = TypeVar("M", bound=BaseModel)
Answer = Mapping[str, object]
Work = Callable[[M, runtime.Runtime], Answer]


class EventFunction(Generic[M]):
    """A Lambda handler: ``handler(event, context)`` parses ``event`` into ``model`` and
    calls ``work(parsed, runtime.current())``."""

    def __init__(self, model: type[M] | TypeAdapter[M], work: Work[M]) -> None:
        self.model = model
        self.work = work
        self.__doc__ = work.__doc__
        self._logged = logger.inject_lambda_context(clear_state=True)(self._handle)
        self._logged_and_flushed = logger.inject_lambda_context(clear_state=True)(
            metrics.log_metrics(raise_on_empty_metrics=False)(self._handle)
        )

    def _handle(self, event: object, context: LambdaContext) -> Answer:
        parsed = parse_event(event, self.model, logger)
        logger.append_keys(event_id=getattr(parsed, "id", None))
        rt = runtime.current()
        admit(parsed, rt)
        return self.work(parsed, rt)

    def __call__(self, event: object, context: LambdaContext) -> Answer:
        # Asked per invocation: the environment says whether metrics are on.
        handler = self._logged_and_flushed if telemetry.enabled() else self._logged
        answer: Answer = handler(event, context)
        return answer


def event_function(model: type[M] | TypeAdapter[M]) -> Callable[[Work[M]], EventFunction[M]]:
    """The decorator (see the module's docstring)."""

    def wrap(work: Work[M]) -> EventFunction[M]:
        return EventFunction(model, work)

    return wrap
