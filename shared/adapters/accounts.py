"""AWS clients per (account, region): the tracker's own account uses the function's role;
a member account is read through its read-only role (``ledger.accounts.member_role_name``,
made by the member stack, ``cdk/member_stack.py``), assumed with STS and its credentials
kept per account until shortly before they expire.

Adapters that make Describe calls (``shared.adapters.inventory.Ec2Inventory``,
``shared.adapters.reservations.Ec2CapacityReservations``,
``shared.adapters.sagemaker.SageMakerTrainingJobs``) take a ``ClientFactory`` (or a plain
boto3 client, which serves every account and region as it is).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol, runtime_checkable

# Credentials are renewed this long before they expire (a call in flight must not outlive
# them).
RENEW_BEFORE = timedelta(minutes=5)
SESSION_SECONDS = 3600  # the member role's maximum session (cdk/member_stack.py)
SESSION_NAME = "costtracker"

# (service, region, credentials or None) -> a boto3 client
MakeClient = Callable[[str, str, "Credentials | None"], Any]


class MemberAccountUnreachable(Exception):
    """The member role could not be assumed (member stack not deployed, role renamed, or the
    account outside the organisation)."""

    def __init__(self, account: str, role_arn: str, reason: str) -> None:
        super().__init__(
            f"cannot read account {account}: AssumeRole of {role_arn} failed ({reason}); "
            "deploy the member stack there (-c stacks=member) with the same "
            "ledger.accounts.member_role_name"
        )
        self.account = account
        self.role_arn = role_arn


@dataclass(frozen=True)
class Credentials:
    access_key_id: str
    secret_access_key: str
    session_token: str
    expiration: datetime


@runtime_checkable
class ClientFactory(Protocol):
    def client_for(self, service: str, account: str = "", region: str = "") -> Any:
        """A client of ``service`` reading ``account`` (empty: the tracker's own) in
        ``region`` (empty: the function's own)."""
        ...


class SingleClient:
    """A ``ClientFactory`` that answers every account and region with one client (tests,
    the local emulator's single account, callers that know where they are)."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def client_for(self, service: str, account: str = "", region: str = "") -> Any:
        return self._client


def factory_of(client_or_factory: Any) -> ClientFactory:
    """A ``ClientFactory`` as it is, or a plain client wrapped in ``SingleClient``."""
    if isinstance(client_or_factory, ClientFactory):
        return client_or_factory
    return SingleClient(client_or_factory)


def partition_of(region: str) -> str:
    if region.startswith("cn-"):
        return "aws-cn"
    if region.startswith("us-gov-"):
        return "aws-us-gov"
    return "aws"


class AccountClients:
    """``ClientFactory`` over STS AssumeRole of the member role in accounts other than
    ``home_account``. ``home_account`` may be a callable (asked once, on first need: e.g.
    STS GetCallerIdentity); ``now`` is the clock credentials are checked against."""

    def __init__(
        self,
        make_client: MakeClient,
        *,
        home_account: str | Callable[[], str],
        role_name: str,
        default_region: str,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._make = make_client
        self._home = home_account
        self._role_name = role_name
        self._region = default_region
        self._now = now
        self._credentials: dict[str, Credentials] = {}
        self._clients: dict[tuple[str, str, str], tuple[Credentials | None, Any]] = {}
        self.assume_calls = 0

    @property
    def home_account(self) -> str:
        if callable(self._home):
            self._home = self._home()
        return self._home

    def role_arn(self, account: str, region: str = "") -> str:
        partition = partition_of(region or self._region)
        return f"arn:{partition}:iam::{account}:role/{self._role_name}"

    def client_for(self, service: str, account: str = "", region: str = "") -> Any:
        region = region or self._region
        member = bool(account) and account != self.home_account
        credentials = self._member_credentials(account, region) if member else None
        key = (service, account if member else "", region)
        cached = self._clients.get(key)
        if cached is not None and cached[0] is credentials:
            return cached[1]
        client = self._make(service, region, credentials)
        self._clients[key] = (credentials, client)
        return client

    def _member_credentials(self, account: str, region: str) -> Credentials:
        held = self._credentials.get(account)
        if held is not None and self._now() < held.expiration - RENEW_BEFORE:
            return held
        role_arn = self.role_arn(account, region)
        sts = self.client_for("sts", "", self._region)
        try:
            response = sts.assume_role(
                RoleArn=role_arn, RoleSessionName=SESSION_NAME, DurationSeconds=SESSION_SECONDS
            )
        except Exception as exc:  # AccessDenied, NoSuchEntity...: one clear line upstream
            code = getattr(exc, "response", {}).get("Error", {}).get("Code") or type(exc).__name__
            raise MemberAccountUnreachable(account, role_arn, str(code)) from exc
        self.assume_calls += 1
        raw = response["Credentials"]
        expiration = raw["Expiration"]
        if isinstance(expiration, str):
            expiration = datetime.fromisoformat(expiration.replace("Z", "+00:00"))
        if expiration.tzinfo is None:
            expiration = expiration.replace(tzinfo=UTC)
        held = Credentials(
            access_key_id=raw["AccessKeyId"],
            secret_access_key=raw["SecretAccessKey"],
            session_token=raw["SessionToken"],
            expiration=expiration,
        )
        self._credentials[account] = held
        return held


def client_config(service: str = "") -> Any:
    """Standard retries (throttling and 5xx back off and retry), short timeouts, and no
    client-side parameter validation unless ``COSTTRACKER_VALIDATE_REQUESTS=1`` (the test
    suite sets it, so every request the adapters build is checked there).

    SNS gets shorter timeouts and fewer attempts (``shared.domain.limits``): one publish
    takes at most ``PUBLISH_WORST_SECONDS``, so a brown-out costs a run seconds, never
    its whole timeout (the outbox sends the alert again later). DynamoDB likewise
    (``TABLE_WORST_SECONDS``): a hanging table costs the budget tick one budget's turn,
    not the whole minute.

    botocore's validation walks every attribute of every request before AWS validates
    it again: measured at a fifth of the replay's client CPU (bench, section 3), and the
    same share of a handler's billed time in Lambda."""
    from botocore.config import Config

    from shared.domain import limits

    validate = os.environ.get("COSTTRACKER_VALIDATE_REQUESTS") == "1"
    if service == "sns":
        return Config(
            retries={"mode": "standard", "max_attempts": limits.PUBLISH_ATTEMPTS},
            connect_timeout=limits.PUBLISH_CONNECT_SECONDS,
            read_timeout=limits.PUBLISH_READ_SECONDS,
            parameter_validation=validate,
        )
    if service == "dynamodb":
        return Config(
            retries={"mode": "standard", "max_attempts": limits.TABLE_ATTEMPTS},
            connect_timeout=limits.TABLE_CONNECT_SECONDS,
            read_timeout=limits.TABLE_READ_SECONDS,
            parameter_validation=validate,
        )
    return Config(
        retries={"mode": "standard", "max_attempts": 5},
        connect_timeout=5,
        read_timeout=20,
        parameter_validation=validate,
    )


def boto3_client(service: str, region: str, credentials: Credentials | None) -> Any:
    """A boto3 client (``client_config``) under the given credentials (None: the
    function's own)."""
    import boto3

    config = client_config(service)
    if credentials is None:
        return boto3.client(service, region_name=region, config=config)
    return boto3.client(
        service,
        region_name=region,
        config=config,
        aws_access_key_id=credentials.access_key_id,
        aws_secret_access_key=credentials.secret_access_key,
        aws_session_token=credentials.session_token,
    )


def caller_account(make_client: MakeClient, region: str) -> str:
    """The tracker's own account (STS GetCallerIdentity needs no permission)."""
    return str(make_client("sts", region, None).get_caller_identity()["Account"])


def aws_errors() -> tuple[type[Exception], ...]:
    """What a failed AWS call raises (an error answer, or none at all): for callers that
    turn it into their own answer without importing the SDK."""
    from botocore.exceptions import BotoCoreError, ClientError

    return (ClientError, BotoCoreError)
