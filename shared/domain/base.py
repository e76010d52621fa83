"""Shared building blocks of the domain models."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """Immutable, no unknown fields; built on first use (see ``shared.config.base._Config``)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class RateSource(StrEnum):
    PRICE_API = "price_api"
    SPOT_HISTORY = "spot_history"
    OVERRIDE = "override"
    SNAPSHOT = "snapshot"


class Rate(Frozen):
    """A price (per hour, or per GB-month) with where it came from and when it was checked."""

    list_usd: Decimal
    effective_usd: Decimal
    source: RateSource
    checked_on: date
    region: str
    note: str = ""

    @property
    def provenance(self) -> str:
        return f"{self.source.value}:{self.checked_on.isoformat()}"
