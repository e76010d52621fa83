"""The CLI's errors: one line on stderr naming the problem and what to do, a non-zero
exit, never a traceback (``--debug`` shows one)."""

from __future__ import annotations

from typing import Any


class CliError(Exception):
    """A mistake the user can fix; ``exit_code`` 2 for bad input, 1 for a failure."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def validation_summary(exc: Any, prefix: str = "") -> str:
    """pydantic's first error as ``where: what`` (never the input), and how many more."""
    errors = exc.errors()
    if not errors:
        return "invalid"
    first = errors[0]
    where = ".".join(str(p) for p in first.get("loc", ()))
    message = str(first.get("msg", "invalid value")).removeprefix("Value error, ")
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{prefix}{where}: {message}{more}" if where else f"{prefix}{message}{more}"
