"""How figures are written: decimal strings to the nano-dollar, cents, ISO times.

Kept apart from ``shared.reports.views`` (which knows the job cost model) so that an event
function can format a figure without importing every cost model at cold start.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import ROUND_HALF_EVEN, Decimal

# Stored and reported to the nano-dollar; display rounds to cents.
PRECISION = Decimal("0.000000001")


def money(value: Decimal) -> str:
    return format(value.quantize(PRECISION, rounding=ROUND_HALF_EVEN), "f")


def cents(value: Decimal) -> str:
    return f"${value.quantize(Decimal('0.01'), rounding=ROUND_HALF_EVEN):,}"


def iso(at: datetime | None) -> str | None:
    if at is None:
        return None
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
