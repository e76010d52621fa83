"""Hourly: catch the events that never came, from EC2's own view.

- a segment the ledger thinks open, of an instance EC2 reports stopped, terminated or no
  longer knows: closed at the best stop time (the time in EC2's state reason, else now),
  marked inferred;
- a running tracked instance the ledger never heard of (or thinks stopped): a segment
  opened at its launch time, marked inferred.
Each instance is handled on its own: one failure is logged and the sweep goes on.
Inferred transitions fold like real ones; a real event that arrives later wins because
the fold keeps the first closing state by time.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from shared.adapters.inventory import Ec2Inventory
from shared.reports.formatting import iso
from shared.services.deps import LedgerDeps
from shared.services.instances import record_state_change

logger = logging.getLogger("costtracker.sweep")
CLOSED = {"stopping", "stopped", "shutting-down", "terminated"}


@dataclass
class SweepResult:
    closed: list[str] = field(default_factory=list)
    opened: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def sweep_missed_events(deps: LedgerDeps, inventory: Ec2Inventory, region: str) -> SweepResult:
    now = deps.clock.now()
    result = SweepResult()
    open_heads = {h.instance_id: h for h in deps.instances.open_heads()}
    states = inventory.states(sorted(open_heads))
    for instance_id, head in open_heads.items():
        try:
            state = states.get(instance_id)
            if state is not None and state.state not in CLOSED:
                continue
            segment = head.open_segment
            if segment is None:
                continue
            name = state.state if state is not None else "terminated"
            at = max((state.changed_at if state is not None else None) or now, segment.span.start)
            outcome = record_state_change(
                deps,
                event_id=f"inferred:{instance_id}:{name}:{iso(at)}",
                at=at,
                instance_id=instance_id,
                state=name,
                region=head.profile.region,
                account=head.account,
                inferred=True,
            )
            if outcome.result == "applied":
                result.closed.append(instance_id)
        except Exception:
            logger.exception("sweep failed for one instance", extra={"instance_id": instance_id})
            result.failed.append(instance_id)
    for state, _ in inventory.running(region):
        if state.instance_id in open_heads or state.launch_time is None:
            continue
        try:
            outcome = record_state_change(
                deps,
                event_id=f"inferred:{state.instance_id}:running:{iso(state.launch_time)}",
                at=state.launch_time,
                instance_id=state.instance_id,
                state="running",
                region=region,
                account=state.account,
                inferred=True,
            )
            if outcome.result == "applied":
                result.opened.append(state.instance_id)
        except Exception:
            logger.exception(
                "sweep failed for one instance", extra={"instance_id": state.instance_id}
            )
            result.failed.append(state.instance_id)
    return result
