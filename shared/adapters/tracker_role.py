"""The tracker's own role (``ledger.accounts.tracker_role_name``, a fixed name): the one
principal every member role trusts. A function reaches a member account in two hops:
its own role assumes the tracker role, whose credentials assume the member role. So the
member template names one ARN exactly (no name prefix, nothing that changes when a
function is added), and the tracker role is deployed before any member stack.

``member_make_client`` builds the ``MakeClient`` of the one client factory
(``shared.adapters.accounts.AccountClients``): its STS client (the one that assumes
member roles) runs as the tracker role; every other client of the tracker's own account
is the function's own."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from shared.adapters.accounts import (
    RENEW_BEFORE,
    SESSION_NAME,
    Credentials,
    MakeClient,
    boto3_client,
    partition_of,
)

# Role chaining caps a chained session at one hour.
CHAINED_SESSION_SECONDS = 3600


def tracker_role_arn(account: str, role_name: str, region: str) -> str:
    return f"arn:{partition_of(region)}:iam::{account}:role/{role_name}"


class TrackerRoleSts:
    """STS as the tracker role: ``assume_role`` runs under the tracker role's credentials
    (renewed before they expire); ``get_caller_identity`` under the function's own."""

    def __init__(
        self,
        own_sts: Any,
        role_arn: Callable[[], str],
        region: str,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        make: MakeClient = boto3_client,
    ) -> None:
        self._own = own_sts
        self._role_arn = role_arn
        self._region = region
        self._now = now
        self._make = make
        self._held: tuple[Credentials, Any] | None = None
        self.assume_calls = 0

    def get_caller_identity(self, **kwargs: Any) -> Any:
        return self._own.get_caller_identity(**kwargs)

    def assume_role(self, **kwargs: Any) -> Any:
        return self._as_tracker().assume_role(**kwargs)

    def _as_tracker(self) -> Any:
        if self._held is not None and self._now() < self._held[0].expiration - RENEW_BEFORE:
            return self._held[1]
        raw = self._own.assume_role(
            RoleArn=self._role_arn(),
            RoleSessionName=SESSION_NAME,
            DurationSeconds=CHAINED_SESSION_SECONDS,
        )["Credentials"]
        self.assume_calls += 1
        expiration = raw["Expiration"]
        if isinstance(expiration, str):
            expiration = datetime.fromisoformat(expiration.replace("Z", "+00:00"))
        if expiration.tzinfo is None:
            expiration = expiration.replace(tzinfo=UTC)
        credentials = Credentials(
            raw["AccessKeyId"], raw["SecretAccessKey"], raw["SessionToken"], expiration
        )
        self._held = (credentials, self._make("sts", self._region, credentials))
        return self._held[1]


def member_make_client(
    own_client: Callable[[str, str], Any],
    chained: bool,
    home_account: Callable[[], str],
    role_name: str,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> MakeClient:
    """The factory's ``MakeClient``: member credentials -> a client under them; the
    tracker's own STS -> ``TrackerRoleSts`` when ``chained``; anything else of the
    tracker's own account -> ``own_client(service, region)``."""
    sts_of: dict[str, TrackerRoleSts] = {}

    def make(service: str, region: str, credentials: Credentials | None) -> Any:
        if credentials is not None:
            return boto3_client(service, region, credentials)
        if service == "sts" and chained:
            if region not in sts_of:
                sts_of[region] = TrackerRoleSts(
                    own_client("sts", region),
                    lambda: tracker_role_arn(home_account(), role_name, region),
                    region,
                    now,
                )
            return sts_of[region]
        return own_client(service, region)

    return make
