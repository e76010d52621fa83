"""The base of the response models and the scalar types they share."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

# Decimal amounts are strings (exact, as the ledger keeps them); times ISO 8601 UTC.
Money = Annotated[str, Field(description="US dollars, a decimal string")]
Instant = Annotated[str, Field(description="ISO 8601 UTC, e.g. 2026-11-01T10:00:00Z")]
Day = Annotated[str, Field(description="a UTC day, ISO 8601 (YYYY-MM-DD)")]


class Reply(BaseModel):
    """A response document: exactly these keys, in this order."""

    model_config = ConfigDict(extra="forbid", defer_build=True, frozen=True)
