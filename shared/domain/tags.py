"""Tag rules (SPEC "Jobs and tags"): grouping tags copied onto jobs, and the one parser
of the ``tokens-per-step`` tag."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from shared.domain.instance import Warning_

if TYPE_CHECKING:
    from shared.config import LedgerConfig


def grouping_tags(tags: Mapping[str, str], config: LedgerConfig) -> dict[str, str]:
    keys = config.tracking.grouping_tag_keys
    return {k: tags[k] for k in keys if k in tags}


def tokens_per_step(value: str | None) -> int | None:
    """A plain integer (digits only) above zero; anything else is no value."""
    if value is None or not value.isascii() or not value.isdigit():
        return None
    parsed = int(value)
    return parsed if parsed > 0 else None


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
