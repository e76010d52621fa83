"""The budget actions' dependencies, built from the container's runtime: the stopper and
the launch denial (IAM through the one client factory, or an SCP) only when
``ledger.budget_actions.enabled`` (else every action is a dry run), the crossing timers'
queue when the stack gave one (``CROSSING_TIMER_QUEUE_URL``)."""

from __future__ import annotations

import os

from shared.adapters.action_store import ActionStore
from shared.app.runtime import Runtime
from shared.services.action_deps import ActionDeps, CrossingTimers, LaunchDenial

TIMER_QUEUE_ENV = "CROSSING_TIMER_QUEUE_URL"


def action_deps(rt: Runtime) -> ActionDeps:
    config = rt.settings.config.budget_actions
    denial: LaunchDenial | None = None
    if config.enabled:
        denial = rt.sources.launch_denial
        if denial is None:
            denial = _denial(rt)
    timers: CrossingTimers | None = rt.sources.crossing_timers
    if timers is None and os.environ.get(TIMER_QUEUE_ENV):
        from shared.adapters.crossing_timers import SqsCrossingTimers

        timers = SqsCrossingTimers(rt.client("sqs"), os.environ[TIMER_QUEUE_ENV])
    return ActionDeps(
        store=ActionStore(rt.table),
        stopper=rt.stopper if config.enabled else None,
        denial=denial,
        deny_principals=config.deny_principals,
        timers=timers,
        home_account=lambda: rt.accounts.home_account,
    )


def _denial(rt: Runtime) -> LaunchDenial:
    """IAM in each principal's own account, or an SCP through the tracker's own role
    (management account or Organizations delegated administrator)."""
    from shared.adapters.accounts import partition_of

    settings = rt.settings.config
    partition = partition_of(rt.region)
    if settings.budget_actions.deny_with == "scp":
        from shared.adapters.scp_denial import ScpLaunchDenial, organizations_region

        organizations = rt.accounts.client_for("organizations", "", organizations_region(partition))
        return ScpLaunchDenial(organizations, settings.accounts.management_account)
    from shared.adapters.launch_denial import IamLaunchDenial

    return IamLaunchDenial(rt.accounts, partition)
