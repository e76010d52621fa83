"""How often the replay lets Python's garbage collector run.

A replay keeps the whole simulated account in this process (the ledger's items, moto's
backends, every handler's modules), and each collection walks what its generations
hold. Set up, most of that never becomes garbage: it is frozen (``gc.freeze``, left out
of every collection) before the first event. Young objects are collected after 10,000
allocations instead of 700 (a replay allocates millions: 1,150 young collections became
about 60 in 100 instances x 7 days, bench), and the oldest generation ten times less
often. What was frozen and the thresholds come back afterwards."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_ALLOCATIONS = 10_000
FULL_EVERY = 100


@contextmanager
def replay_collections(young: int = YOUNG_ALLOCATIONS, every: int = FULL_EVERY) -> Iterator[None]:
    """Freeze what set-up made, collect less often inside; a process that already asked
    for fewer collections keeps its thresholds."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(before[0], young), before[1], max(before[2], every))
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
