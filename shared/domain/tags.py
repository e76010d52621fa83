"""Tag rules (docs/cost-rules.md "Jobs and tags"): the one parser of ``tokens-per-step`` (used by
the
job cost, every view and ``/compare``), grouping tags copied onto jobs, and the warning
for a ``tokens-per-step`` value the parser refuses."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from shared.domain.instance import CostWarning

if TYPE_CHECKING:
    from shared.config.ledger import LedgerConfig

_DIGITS = re.compile(r"[0-9]+")
# A breakdown's entry for spend without the key (so every breakdown adds up).
NO_TAG = "(none)"
# Far beyond any model's tokens per step; a bigger value is a typo, not a measurement.
MAX_TOKENS_PER_STEP = 10**12


def tokens_per_step(value: str | None) -> int | None:
    """A ``tokens-per-step`` tag (docs/cost-rules.md: a plain integer, digits only): the number, or
    None for any other value ("1,024", "4k", "2.5e6", "-1", "0", Unicode digits)."""
    if value is None or not _DIGITS.fullmatch(value):
        return None
    tokens = int(value)
    return tokens if 0 < tokens <= MAX_TOKENS_PER_STEP else None


def grouping_tags(tags: Mapping[str, str], config: LedgerConfig) -> dict[str, str]:
    """The tags copied onto the job: the grouping keys, and the declared run length
    (``expected-duration-hours``) that budget forecasts project to."""
    keys = (*config.tracking.grouping_tag_keys, config.budgeting.expected_duration_tag)
    return {k: tags[k] for k in keys if k in tags}


def tag_warnings(tags: Mapping[str, str], config: LedgerConfig) -> list[CostWarning]:
    key = config.checkpoint.tokens_per_step_tag
    value = tags.get(key)
    if value is not None and tokens_per_step(value) is None:
        return [
            CostWarning(
                kind="bad_tag_value",
                detail=f"tag {key}={value!r} is not a plain integer: ignored",
            )
        ]
    return []
