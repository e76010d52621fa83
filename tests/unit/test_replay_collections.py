"""The replay collects its oldest generation less often, and only while it runs."""

from __future__ import annotations

import gc

import pytest

from costtracker.replay import fewer_full_collections


def test_full_collections_are_rarer_inside_and_as_before_after() -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with fewer_full_collections():
            assert gc.get_threshold() == (700, 10, 100)
        assert gc.get_threshold() == (700, 10, 10)
        gc.set_threshold(500, 5, 1000)  # a process that already asked for fewer keeps it
        with pytest.raises(RuntimeError), fewer_full_collections():
            assert gc.get_threshold() == (500, 5, 1000)
            raise RuntimeError("the replay failed")
        assert gc.get_threshold() == (500, 5, 1000)
    finally:
        gc.set_threshold(*before)
