"""``shared.adapters.account_store``: the health record's event kinds."""

from __future__ import annotations

from shared.adapters.account_store import kind_of
from shared.app.functions import FUNCTIONS
from shared.app.triggers import EventRule


def test_every_detail_type_a_function_receives_has_a_kind_of_its_own() -> None:
    """A health record counts each event a function's rule accepts under its own kind:
    ``other`` is left for what no rule routes (both Capacity Block spellings included)."""
    routed = {
        detail_type
        for function in FUNCTIONS
        if isinstance(function.trigger, EventRule)
        for detail_type in function.trigger.pattern.get("detail-type", [])
    }
    assert "Capacity Block Reservation Delivered" in routed
    assert {d: kind_of(d) for d in routed if kind_of(d) == "other"} == {}
    assert kind_of("Some Other Event") == "other"
