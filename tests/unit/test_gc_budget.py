"""The replay collects less often, and only while it runs; what it froze comes back."""

from __future__ import annotations

import gc

import pytest

from costtracker.gc_budget import replay_collections


def test_collections_are_rarer_inside_and_as_before_after() -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with replay_collections():
            assert gc.get_threshold() == (10_000, 10, 100)
            assert gc.get_freeze_count() > 0  # set-up's objects are left out of collections
        assert gc.get_threshold() == (700, 10, 10)
        assert gc.get_freeze_count() == 0
        gc.set_threshold(50_000, 5, 1000)  # a process that already asked for fewer keeps it
        with pytest.raises(RuntimeError), replay_collections():
            assert gc.get_threshold() == (50_000, 5, 1000)
            raise RuntimeError("the replay failed")
        assert gc.get_threshold() == (50_000, 5, 1000)
        assert gc.get_freeze_count() == 0
    finally:
        gc.set_threshold(*before)


def test_garbage_made_inside_is_still_collected() -> None:
    with replay_collections():
        cycle: list[object] = []
        cycle.append(cycle)
        del cycle
        assert gc.collect() >= 1
