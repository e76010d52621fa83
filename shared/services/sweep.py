"""The sweep for missed events, from EC2's own view, one page at a time.

Per DescribeInstances page of one account and region:

- a segment the ledger thinks open, of an instance EC2 reports stopped, terminated or no
  longer knows: closed at the best stop time (the time in EC2's state reason, else now),
  marked inferred;
- a running tracked instance the ledger never heard of (or thinks stopped): a segment
  opened at its launch time, marked inferred.

A page of at most ``page_size`` instances is one unit of work; its ``NextToken`` is the
next unit (``SweepPage.next_token``), so a unit's calls, time and memory stay those of
one page however large the organisation (``plan`` makes one first unit per account and
region; the fan-out runs them: ``functions/sweep_worker``). The first page of an account
and region also asks EC2 about the ledger's open instances there that it did not list.
Each instance is handled on its own: one failure is logged and the page goes on.
Inferred transitions fold like real ones (deterministic event ids: a unit run twice
writes nothing new); a real event that arrives later wins because the fold keeps the
first closing state by time.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from shared.adapters.inventory import Ec2State
from shared.domain.instance import InstanceHead, InstanceProfile
from shared.events.sweep_unit import SweepUnit
from shared.reports.formatting import iso
from shared.services.deps import LedgerDeps
from shared.services.instances import record_state_change

logger = logging.getLogger("costtracker.sweep")
CLOSED = {"stopping", "stopped", "shutting-down", "terminated"}
Page = list[tuple[Ec2State, Callable[[], InstanceProfile]]]


class SweptEc2(Protocol):
    """What the sweep asks EC2 (``shared.adapters.inventory.Ec2Inventory``)."""

    def page(
        self, account: str, region: str, token: str | None, size: int
    ) -> tuple[Page, str | None]: ...

    def states(
        self, instance_ids: list[str], account: str = "", region: str = ""
    ) -> dict[str, Ec2State]: ...


@dataclass
class SweepResult:
    closed: list[str] = field(default_factory=list)
    opened: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    # Running instances whose team tag the team's account allow-list refuses.
    refused: list[str] = field(default_factory=list)
    listed: int = 0
    next_token: str | None = None

    def add(self, other: SweepResult) -> None:
        for name in ("closed", "opened", "failed", "refused"):
            getattr(self, name).extend(getattr(other, name))
        self.listed += other.listed


def plan(
    accounts: Iterable[str], regions: Iterable[str], page_size: int, sweep_id: str
) -> list[SweepUnit]:
    """The first unit of every account x region (the pages after come from the units)."""
    return [
        SweepUnit(account=account, region=region, page_size=page_size, sweep_id=sweep_id)
        for account in accounts
        for region in regions
    ]


def sweep_page(
    deps: LedgerDeps,
    ec2: SweptEc2,
    *,
    account: str,
    region: str,
    token: str | None = None,
    page_size: int = 1000,
    team_allows: Callable[[str | None, str], bool] = lambda team, account: True,
) -> SweepResult:
    """One page of ``account`` (empty: the tracker's own) in ``region``; raises when EC2
    cannot be read there (role not assumable, region off, throttled past retries)."""
    now = deps.clock.now()
    result = SweepResult()
    page, result.next_token = ec2.page(account, region, token, page_size)
    result.listed = len(page)
    open_heads = {
        h.instance_id: h for h in deps.instances.open_heads(account) if h.profile.region == region
    }
    listed: dict[str, Ec2State] = {state.instance_id: state for state, _ in page}
    if token is None:  # the first page: the open instances EC2 may no longer list
        unlisted = sorted(set(open_heads) - set(listed))
        known = ec2.states(unlisted, account, region) if unlisted else {}
        for instance_id in unlisted:
            _close_if_stopped(deps, open_heads[instance_id], known.get(instance_id), now, result)
    team_key = deps.config.access.team_tag_key
    for state, _ in page:
        head = open_heads.get(state.instance_id)
        if head is not None:
            _close_if_stopped(deps, head, state, now, result)
        elif state.state == "running" and state.launch_time is not None:
            owner = state.account or account
            if not team_allows(state.tags.get(team_key), owner):
                result.refused.append(state.instance_id)
                continue
            _open(deps, state, owner, region, result)
    return result


def _close_if_stopped(
    deps: LedgerDeps, head: InstanceHead, state: Ec2State | None, now: datetime, result: SweepResult
) -> None:
    instance_id = head.instance_id
    try:
        if state is not None and state.state not in CLOSED:
            return
        segment = head.open_segment
        if segment is None:
            return
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


def _open(
    deps: LedgerDeps, state: Ec2State, account: str, region: str, result: SweepResult
) -> None:
    assert state.launch_time is not None
    try:
        outcome = record_state_change(
            deps,
            event_id=f"inferred:{state.instance_id}:running:{iso(state.launch_time)}",
            at=state.launch_time,
            instance_id=state.instance_id,
            state="running",
            region=region,
            account=account,
            inferred=True,
        )
        if outcome.result == "applied":
            result.opened.append(state.instance_id)
    except Exception:
        logger.exception("sweep failed for one instance", extra={"instance_id": state.instance_id})
        result.failed.append(state.instance_id)


def sweep_missed_events(
    deps: LedgerDeps, ec2: SweptEc2, region: str, account: str = ""
) -> SweepResult:
    """Every page of one account and region in this process (the tracker's own account
    when ``account`` is empty): the single-account sweep, tests and the local twin."""
    total, token = SweepResult(), None
    while True:
        page = sweep_page(deps, ec2, account=account, region=region, token=token)
        total.add(page)
        token = page.next_token
        if token is None:
            return total
