"""The Lambda context that local runs (replay, the local API, tests) hand to handlers."""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass, field

# Request ids count up from 1 in each process: unique within a run, as Lambda's are, and
# made without drawing random bytes for each of a replay's invocations.
_request_numbers = itertools.count(1)


def next_request_id() -> str:
    """A fresh request id: a UUID string (00000000-0000-0000-0000-000000000001, ...)."""
    return str(uuid.UUID(int=next(_request_numbers)))


@dataclass
class FakeLambdaContext:
    """Enough of the Lambda context for Powertools' logger."""

    function_name: str
    memory_limit_in_mb: int = 256
    aws_request_id: str = field(default_factory=next_request_id)

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:local:000000000000:function:{self.function_name}"
