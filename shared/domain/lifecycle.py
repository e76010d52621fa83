"""EC2 lifecycle rules (cost rule 1): which spans of an instance's life are billed.

Events are folded in event-time order (same second: lifecycle order), never in
arrival order. A span runs from a ``running`` to the next closing state; a
hibernating spot stop bills through ``stopping`` until ``stopped``;
``terminated`` is final: anything timed after it bills nothing and is reported.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Literal

from shared.domain.base import Frozen

InstanceStateName = Literal[
    "pending", "running", "stopping", "stopped", "shutting-down", "terminated"
]
CLOSING_STATES: frozenset[str] = frozenset({"stopping", "shutting-down", "stopped", "terminated"})
BILLING_STATES: frozenset[str] = CLOSING_STATES | {"running"}
STATE_RANK = {
    "pending": 0,
    "running": 1,
    "stopping": 2,
    "shutting-down": 2,
    "stopped": 3,
    "terminated": 4,
}

OrderKey = tuple[datetime, int, str]


class Transition(Frozen):
    """One EC2 state change, identified by its EventBridge event id."""

    event_id: str
    at: datetime
    state: InstanceStateName
    # Not from an event: the hourly sweep's best reading of EC2 (a missed event).
    inferred: bool = False

    @property
    def order(self) -> OrderKey:
        return (self.at, STATE_RANK[self.state], self.event_id)


class Notice(Frozen):
    """A spot interruption warning (terminate/stop/hibernate) or a rebalance
    recommendation (``rebalance``): an early risk signal with no cost of its own."""

    event_id: str
    at: datetime
    action: str

    @property
    def is_interruption(self) -> bool:
        return self.action != "rebalance"


class OpenSpan(Frozen):
    """A span still open where the fold starts (carried across the head's window floor)."""

    start: datetime
    start_event_id: str
    inferred: bool = False


class Span(Frozen):
    """A billed running span; ``end`` is None while it runs."""

    start: datetime
    end: datetime | None
    start_event_id: str
    end_event_id: str | None = None
    end_state: str | None = None
    inferred: bool = False  # either end came from the sweep, not an event

    @property
    def key(self) -> str:
        return self.start_event_id


def _order(t: Transition) -> OrderKey:
    """``Transition.order`` as a plain function (the sort key, without a property call)."""
    return (t.at, STATE_RANK[t.state], t.event_id)


def ordered(transitions: Iterable[Transition]) -> list[Transition]:
    unique = {t.event_id: t for t in transitions}
    return sorted(unique.values(), key=_order)


def _hibernating(start: datetime, stop_at: datetime, notices: Sequence[Notice]) -> bool:
    return any(n.action == "hibernate" and start <= n.at <= stop_at for n in notices)


class Fold(Frozen):
    spans: tuple[Span, ...]
    # Transitions timed after ``terminated``: they bill nothing and are reported.
    after_terminated: tuple[Transition, ...] = ()
    terminated_at: datetime | None = None
    # The state the fold ended in: open span (if any).
    open: OpenSpan | None = None


def fold(
    transitions: Iterable[Transition],
    notices: Sequence[Notice] = (),
    start_open: OpenSpan | None = None,
    terminated_at: datetime | None = None,
    known: Mapping[str, Span] | None = None,
) -> Fold:
    """Fold transitions (any order, duplicates allowed) into billed spans (``known``:
    see ``fold_ordered``)."""
    return fold_ordered(ordered(transitions), notices, start_open, terminated_at, known)


def fold_ordered(
    transitions: Sequence[Transition],
    notices: Sequence[Notice] = (),
    start_open: OpenSpan | None = None,
    terminated_at: datetime | None = None,
    known: Mapping[str, Span] | None = None,
) -> Fold:
    """``fold`` of transitions already as ``ordered`` returns them (unique, in event-time
    order): a caller that holds them so (the head's window) folds without sorting again.

    ``known``: spans folded before, by ``Span.key``; a span equal to one of them is that
    very object (spans are immutable values: most of a head's spans come out of a refold
    as they went in, and making each anew is most of a fold's cost)."""
    spans: list[Span] = []
    after: list[Transition] = []
    known = known or {}
    # The open span as (start, start event id, inferred): most spans close inside the
    # fold, so an ``OpenSpan`` is made only for the one left open (``start_open`` itself
    # while that is still the open one).
    given = start_open
    opened: tuple[datetime, str, bool] | None = None
    if start_open is not None:
        opened = (start_open.start, start_open.start_event_id, start_open.inferred)
    for t in transitions:
        state = t.state
        if terminated_at is not None:
            if t.at > terminated_at or (t.at == terminated_at and state != "terminated"):
                after.append(t)
            continue
        if state == "running":
            if opened is None:
                opened = (t.at, t.event_id, t.inferred)
            continue
        if state not in CLOSING_STATES:
            continue
        if state == "terminated":
            terminated_at = t.at
        if opened is None:
            continue  # a stop with no running before it bills nothing
        start, start_event_id, inferred = opened
        if state == "stopping" and notices and _hibernating(start, t.at, notices):
            continue
        spans.append(
            _span(known, start, t.at, start_event_id, t.event_id, state, inferred or t.inferred)
        )
        opened = given = None
    open_span = None
    if opened is not None:
        start, start_event_id, inferred = opened
        spans.append(_span(known, start, None, start_event_id, None, None, inferred))
        open_span = (
            given
            if given is not None
            else OpenSpan(start=start, start_event_id=start_event_id, inferred=inferred)
        )
    return Fold(
        spans=tuple(spans),
        after_terminated=tuple(after),
        terminated_at=terminated_at,
        open=open_span,
    )


# Every field of a Span, as ``_span`` compares them (a test holds this to Span's fields).
SPAN_FIELDS = ("start", "end", "start_event_id", "end_event_id", "end_state", "inferred")


def _span(
    known: Mapping[str, Span],
    start: datetime,
    end: datetime | None,
    start_event_id: str,
    end_event_id: str | None,
    end_state: str | None,
    inferred: bool,
) -> Span:
    """The span with these fields: the known one with the same key if it is equal in
    every field (as ``Span.__eq__`` would find it), else a new one."""
    same = known.get(start_event_id)
    if (
        same is not None
        and same.start == start
        and same.end == end
        and same.end_event_id == end_event_id
        and same.end_state == end_state
        and same.inferred == inferred
    ):
        return same
    return Span(
        start=start,
        end=end,
        start_event_id=start_event_id,
        end_event_id=end_event_id,
        end_state=end_state,
        inferred=inferred,
    )
