"""What budget actions and crossing timers need beyond the ledger: the protocols of
their adapters (IAM for deny_launch, SQS for timers) and the bundle a run is given."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from shared.adapters.action_store import ActionStore
from shared.services.stopper import Stopper


class LaunchDenial(Protocol):
    def ensure_policy(self, action_id: str, tags: Mapping[str, str]) -> str: ...

    def attach(self, policy_arn: str, principal_arn: str) -> None: ...

    def detach(self, policy_arn: str, principal_arn: str) -> None: ...


class CrossingTimers(Protocol):
    def plan(self, budget_id: str, threshold: int, moment: datetime, now: datetime) -> None:
        """Deliver a timer message for ``budget_id`` at ``moment`` (within 900 s)."""
        ...


@dataclass(frozen=True)
class ActionDeps:
    store: ActionStore
    # None when actions are not enabled: nothing is ever stopped or denied.
    stopper: Stopper | None
    denial: LaunchDenial | None
    deny_principals: tuple[str, ...] = ()
    timers: CrossingTimers | None = None
