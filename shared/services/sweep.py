"""Hourly: catch the events that never came, from EC2's own view.

- a segment the ledger thinks open, of an instance EC2 reports stopped, terminated or no
  longer knows: closed at the best stop time (the time in EC2's state reason, else now),
  marked inferred;
- a running tracked instance the ledger never heard of (or thinks stopped): a segment
  opened at its launch time, marked inferred.
Inferred transitions fold like real ones; a real event that arrives later wins because
its id differs and the fold keeps the first closing state by time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

from shared.costing import fold_segments
from shared.inventory import Ec2Inventory
from shared.models import InstanceRecord, Transition
from shared.services.instance_state import (
    LedgerDeps,
    apply_transition,
    days_to_mark,
    update_instance,
)
from shared.views import iso

CLOSED = {"stopping", "stopped", "shutting-down", "terminated"}


@dataclass
class SweepResult:
    closed: list[str] = field(default_factory=list)
    opened: list[str] = field(default_factory=list)


def _inferred(deps: LedgerDeps, instance_id: str, region: str, transition: Transition) -> bool:
    def change(record: InstanceRecord, now: datetime) -> tuple[InstanceRecord, set[date]]:
        updated, segment = apply_transition(record, transition, now)
        return updated, days_to_mark(updated, segment, transition.at.date(), now)

    outcome, _ = update_instance(deps, instance_id, region, transition.event_id, change)
    return outcome.result == "applied"


def sweep_missed_events(deps: LedgerDeps, inventory: Ec2Inventory, region: str) -> SweepResult:
    now = deps.clock.now()
    result = SweepResult()
    open_records = {r.instance_id: r for r in deps.ledger.open_instances()}
    states = inventory.states(sorted(open_records))
    for instance_id, record in open_records.items():
        state = states.get(instance_id)
        if state is not None and state.state not in CLOSED:
            continue
        name = state.state if state is not None else "terminated"
        at = (state.changed_at if state is not None else None) or now
        (segment,) = [s for s in fold_segments(instance_id, record.transitions) if s.end is None]
        at = max(at, segment.start)
        transition = Transition(
            event_id=f"inferred:{instance_id}:{name}:{iso(at)}",
            at=at,
            state=name,
            inferred=True,
        )
        if _inferred(deps, instance_id, record.profile.region, transition):
            result.closed.append(instance_id)
    for state, _ in inventory.running(region):
        if state.instance_id in open_records or state.launch_time is None:
            continue
        current = deps.ledger.get_instance(state.instance_id)
        if current == "untracked":
            continue
        if isinstance(current, InstanceRecord):
            last = max((t.at for t in current.transitions), default=None)
            if last is not None and last >= state.launch_time:
                continue  # the ledger already knows this run (or a later event)
        transition = Transition(
            event_id=f"inferred:{state.instance_id}:running:{iso(state.launch_time)}",
            at=state.launch_time,
            state="running",
            inferred=True,
        )
        if _inferred(deps, state.instance_id, region, transition):
            result.opened.append(state.instance_id)
    return result
