"""Tag rules (SPEC "Jobs and tags"): grouping tags copied onto jobs, and the warning for a
``tokens-per-step`` value the one parser (``shared.tags``) refuses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from shared.domain.instance import Warning_
from shared.tags import tokens_per_step

if TYPE_CHECKING:
    from shared.config import LedgerConfig


def grouping_tags(tags: Mapping[str, str], config: LedgerConfig) -> dict[str, str]:
    """The tags copied onto the job: the grouping keys, and the declared run length
    (``expected-duration-hours``) that budget forecasts project to."""
    keys = (*config.tracking.grouping_tag_keys, config.budgeting.expected_duration_tag)
    return {k: tags[k] for k in keys if k in tags}


def tag_warnings(tags: Mapping[str, str], config: LedgerConfig) -> list[Warning_]:
    key = config.checkpoint.tokens_per_step_tag
    value = tags.get(key)
    if value is not None and tokens_per_step(value) is None:
        return [
            Warning_(
                kind="bad_tag_value",
                detail=f"tag {key}={value!r} is not a plain integer: ignored",
            )
        ]
    return []
