"""EC2 lifecycle rules (cost rule 1): which spans of an instance's life are billed.

Events are folded in event-time order (same second: lifecycle order), never in
arrival order. A span runs from a ``running`` to the next closing state; a
hibernating spot stop bills through ``stopping`` until ``stopped``;
``terminated`` is final: anything timed after it bills nothing and is reported.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
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


def ordered(transitions: Iterable[Transition]) -> list[Transition]:
    unique = {t.event_id: t for t in transitions}
    return sorted(unique.values(), key=lambda t: t.order)


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
) -> Fold:
    """Fold transitions (any order, duplicates allowed) into billed spans."""
    spans: list[Span] = []
    open_span = start_open
    after: list[Transition] = []
    for t in ordered(transitions):
        if terminated_at is not None:
            if t.at > terminated_at or (t.at == terminated_at and t.state != "terminated"):
                after.append(t)
            continue
        if t.state == "running":
            if open_span is None:
                open_span = OpenSpan(start=t.at, start_event_id=t.event_id, inferred=t.inferred)
            continue
        if t.state not in CLOSING_STATES:
            continue
        if t.state == "terminated":
            terminated_at = t.at
        if open_span is None:
            continue  # a stop with no running before it bills nothing
        if t.state == "stopping" and _hibernating(open_span.start, t.at, notices):
            continue
        spans.append(
            Span(
                start=open_span.start,
                end=t.at,
                start_event_id=open_span.start_event_id,
                end_event_id=t.event_id,
                end_state=t.state,
                inferred=open_span.inferred or t.inferred,
            )
        )
        open_span = None
    if open_span is not None:
        spans.append(
            Span(
                start=open_span.start,
                end=None,
                start_event_id=open_span.start_event_id,
                inferred=open_span.inferred,
            )
        )
    return Fold(
        spans=tuple(spans),
        after_terminated=tuple(after),
        terminated_at=terminated_at,
        open=open_span,
    )
