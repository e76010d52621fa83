"""The sweep fanned out over the organisation: the hourly planner puts one unit per
admitted account x configured region on the work queue; a worker runs one unit (one
DescribeInstances page, ``shared.services.sweep.sweep_page``) and puts the page's
``NextToken`` back on the queue as the next unit.

A unit that fails (the member role cannot be assumed, the region is not enabled, EC2
throttles past the client's retries) records the error on its account's health record
and raises: SQS delivers it again after its visibility timeout, and after the queue's
``maxReceiveCount`` it rests in the dead-letter queue. Every other unit is its own
message, so one failing account never stops the others."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Protocol

from shared.adapters.account_store import AccountStore
from shared.adapters.accounts import MemberAccountUnreachable
from shared.events.sweep_unit import SweepUnit
from shared.services.account_trust import AccountTrust
from shared.services.deps import LedgerDeps
from shared.services.sweep import SweepResult, SweptEc2, plan, sweep_page

logger = logging.getLogger("costtracker.sweep")


class WorkQueue(Protocol):
    def send(self, units: Sequence[SweepUnit]) -> None: ...


def start_sweep(
    trust: AccountTrust, queue: WorkQueue, regions: Sequence[str], page_size: int, sweep_id: str
) -> dict[str, int]:
    """Queue the first unit of every admitted account and region."""
    accounts = trust.members()
    units = plan(accounts, regions, page_size, sweep_id)
    queue.send(units)
    return {"accounts": len(accounts), "regions": len(regions), "units": len(units)}


def error_text(exc: BaseException) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        error = response.get("Error", {})
        return f"{error.get('Code', type(exc).__name__)}: {error.get('Message', '')}".strip()
    return f"{type(exc).__name__}: {exc}"


def run_unit(
    deps: LedgerDeps,
    ec2: SweptEc2,
    unit: SweepUnit,
    *,
    trust: AccountTrust,
    store: AccountStore,
    queue: WorkQueue,
    alarms_in_place: Callable[[str, str], int] | None = None,
) -> SweepResult:
    """One unit; raises (after recording the error) when its account cannot be read."""
    now = deps.clock.now()
    trust.check(unit.account)  # an account that left the organisation since the plan
    try:
        result = sweep_page(
            deps,
            ec2,
            account=unit.account,
            region=unit.region,
            token=unit.next_token,
            page_size=unit.page_size,
            team_allows=trust.team_allows,
        )
    except Exception as exc:
        assumable = False if isinstance(exc, MemberAccountUnreachable) else None
        store.failed(unit.account, now, f"{unit.label}: {error_text(exc)}", assumable)
        logger.error("sweep unit failed", extra={"unit": unit.label, "error": error_text(exc)})
        raise
    if result.next_token is not None:
        queue.send([unit.following(result.next_token)])
    if unit.page == 1:
        alarms = None
        if alarms_in_place is not None:
            try:
                alarms = alarms_in_place(unit.account, unit.region)
            except Exception as exc:  # health only: the sweep itself went through
                logger.warning(
                    "alarm census failed", extra={"unit": unit.label, "error": error_text(exc)}
                )
        store.swept(unit.account, unit.region, now, alarms)
    if result.failed or result.refused:
        logger.warning(
            "sweep unit: some instances failed or were refused",
            extra={"unit": unit.label, "failed": result.failed, "refused": result.refused},
        )
    return result
