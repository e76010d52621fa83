"""The Lambda context that local runs (replay, the local API, tests) hand to handlers."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field


@dataclass
class FakeLambdaContext:
    """Enough of the Lambda context for Powertools' logger."""

    function_name: str
    memory_limit_in_mb: int = 256
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:local:000000000000:function:{self.function_name}"
