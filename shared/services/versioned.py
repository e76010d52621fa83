"""One optimistic-locking loop for every versioned update of the ledger.

An attempt reads what it needs (the stores keep warm copies), builds one unit of
work whose writes are conditioned on the versions it read, and commits it with
``commit``. A write that lost a race (a condition failed) writes nothing: the stores
that staged its operations forget what the attempt read (they said so when staging,
``UnitOfWork.add``) and the attempt runs again, reading afresh, at most
``MAX_ATTEMPTS`` times; then ``ConcurrentUpdates`` (Lambda retries the event later).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from shared.adapters.table import ConditionFailed

if TYPE_CHECKING:
    from shared.adapters.unit_of_work import UnitOfWork

MAX_ATTEMPTS = 5
T = TypeVar("T")


class ConcurrentUpdates(Exception):
    """The records kept changing under us; Lambda retries the event."""


class LostRace(Exception):
    """An attempt's commit failed on a version it read: run the attempt again."""


def commit(uow: UnitOfWork) -> None:
    """Commit the attempt's writes; on a failed condition (the stores have forgotten
    what the attempt read) raise ``LostRace``."""
    try:
        uow.commit()
    except ConditionFailed as exc:
        raise LostRace from exc


def versioned_update(attempt: Callable[[int], T], subject: str, attempts: int = MAX_ATTEMPTS) -> T:
    """``attempt(n)`` (n = 0, 1, ...) until one returns without losing a race."""
    for n in range(attempts):
        try:
            return attempt(n)
        except LostRace:
            continue
    raise ConcurrentUpdates(subject)
