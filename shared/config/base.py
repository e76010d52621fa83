"""The base of every configuration model, and the price bound they share (apart from
``shared.config.ledger`` so that the price configuration can live in its own module)."""

from __future__ import annotations

from decimal import Decimal

from pydantic import BaseModel, ConfigDict

# No hourly (or GB-month) price is above this: a larger figure is a typo.
MAX_PRICE = Decimal(100_000)


class _Config(BaseModel):
    """Base of the configuration models.

    Cold start: every pydantic model of the Lambda code is built on first use, not at
    import. One idiom: ``defer_build=True`` in the model's base config (pydantic builds
    the validator the first time the model validates), and a model-typed default is a
    ``Field(default_factory=...)``, never an instance made at import (making one would
    build the model). ``tests/unit/test_cold_import.py`` guards it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)
