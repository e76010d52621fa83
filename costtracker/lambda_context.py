"""The Lambda context that local runs (replay, the local API, tests) hand to handlers."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

# Request ids count up from 1 in each process: unique within a run, as Lambda's are, and
# made without drawing random bytes for each of a replay's invocations.
_request_numbers = itertools.count(1)


def next_request_id() -> str:
    """A fresh request id: a UUID string (00000000-0000-0000-0000-000000000001, ...), the
    number's 32 hex digits in UUID's groups (what ``str(uuid.UUID(int=n))`` gives, without
    building the UUID: one per invocation)."""
    digits = f"{next(_request_numbers):032x}"
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


@dataclass
class FakeLambdaContext:
    """Enough of the Lambda context for Powertools' logger."""

    function_name: str
    memory_limit_in_mb: int = 256
    aws_request_id: str = field(default_factory=next_request_id)

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:local:000000000000:function:{self.function_name}"
