"""What budget actions and crossing timers need beyond the ledger: the protocols of
their adapters (IAM for deny_launch, SQS for timers) and the bundle a run is given."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from shared.adapters.action_store import ActionStore
from shared.services.stopper import Stopper


class LaunchDenial(Protocol):
    """IAM (``via`` "iam": a policy per account, its parts principal ARNs) or an SCP
    ("scp": one policy, its parts member account ids)."""

    via: str

    def ensure_policy(self, action_id: str, tags: Mapping[str, str], account: str) -> str: ...

    def attach(self, policy: str, target: str) -> None: ...

    def detach(self, policy: str, target: str) -> None: ...

    def delete_policy(self, policy: str) -> None: ...


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
    # The tracker's own account (a release detaches there at once; the tick the rest).
    home_account: Callable[[], str] = lambda: ""
