"""Events older than an instance head's window: read back the sealed segments they may
change, fold them all again, and let the window shrink back."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shared.domain import accrual as acc
from shared.domain.instance import Change, InstanceHead, refold
from shared.domain.lifecycle import Transition
from shared.domain.segments import SegmentCost, segment_accrual
from shared.reports.formatting import iso

if TYPE_CHECKING:
    from shared.services.deps import LedgerDeps


def _transitions_of(cost: SegmentCost) -> list[Transition]:
    span = cost.span
    out = [Transition(event_id=span.start_event_id, at=span.start, state="running")]
    if span.end is not None and span.end_event_id and span.end_state:
        out.append(Transition(event_id=span.end_event_id, at=span.end, state=span.end_state))
    return out


def widen_and_refold(deps: LedgerDeps, head: InstanceHead, transition: Transition) -> Change:
    in_window = {s.span.key for s in head.segments}
    restored = [
        cost
        for cost in deps.instances.sealed_segments(head, transition.at)
        if cost.span.key not in in_window
    ]
    sealed = acc.from_attributes(head.sealed)
    for cost in restored:
        sealed.add(segment_accrual(cost), -1)
    segments = sorted([*restored, *head.segments], key=lambda s: s.span.start)
    window = list(head.window)
    known = {t.event_id for t in window}
    for cost in segments:
        for t in _transitions_of(cost):
            if t.event_id not in known:
                window.append(t)
                known.add(t.event_id)
    terminated = head.floor_terminated
    if terminated is not None and not any(  # the floor's stays final whatever comes later
        t.state == "terminated" and t.at == terminated for t in window
    ):
        window.append(
            Transition(event_id=f"terminated@{iso(terminated)}", at=terminated, state="terminated")
        )
    widened = head.model_copy(
        update={
            "segments": tuple(segments),
            "sealed": acc.to_attributes(sealed),
            "sealed_count": max(0, head.sealed_count - len(restored)),
            "floor": None,
            "floor_open": None,
            "floor_terminated": None,
        }
    )
    return refold(
        widened, (*window, transition), head.notices, deps.prices.pin_for, deps.prices.series
    )
