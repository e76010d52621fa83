"""Tag values with a meaning of their own, parsed in one place."""

from __future__ import annotations

import re

_DIGITS = re.compile(r"[0-9]+")
# Far beyond any model's tokens per step; a bigger value is a typo, not a measurement.
MAX_TOKENS_PER_STEP = 10**12


def tokens_per_step(value: str | None) -> int | None:
    """A ``tokens-per-step`` tag (SPEC: a plain integer, digits only): the number, or
    None for any other value ("1,024", "4k", "2.5e6", "-1", "0", Unicode digits)."""
    if value is None or not _DIGITS.fullmatch(value):
        return None
    tokens = int(value)
    return tokens if 0 < tokens <= MAX_TOKENS_PER_STEP else None
