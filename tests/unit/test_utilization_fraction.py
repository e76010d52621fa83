"""A CloudWatch percent becomes a fraction clamped into [0, 1] (docs/utilization.md):
agents sometimes report a little over 100 %, and such a point must not lift a mean
above full use."""

from __future__ import annotations

from decimal import Decimal

import pytest

from shared.domain.utilization import fraction


@pytest.mark.parametrize(
    ("percent", "expected"),
    [("87.5", Decimal("0.875")), (0, Decimal(0)), (100, Decimal(1)), ("100.4", Decimal(1)),
     (250.0, Decimal(1)), ("-3", Decimal(0))],
)  # fmt: skip
def test_a_percent_is_a_fraction_and_above_100_counts_as_1(
    percent: str | float, expected: Decimal
) -> None:
    assert fraction(percent) == expected
