"""deny_launch in IAM: a deny policy the tracker creates under its own path
(``/costtracker/``) in each principal's own account (the tracker's own with the
function's role, a member account through its member role, both from the one client
factory), attached to and detached from the configured principals, and deleted once
lifted. Only policies on that path are ever attached or detached (the function's and the
member role's IAM grants say so too). A principal at its quota of attached policies
(``LimitExceeded``) is reported, never retried for ever."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from botocore.exceptions import ClientError

from shared.adapters.accounts import factory_of

POLICY_PATH = "/costtracker/"
# Launch actions a scope's tags are denied on; ec2:CreateTags too, so that launching
# untagged and tagging afterwards does not get round it.
DENIED_LAUNCHES = ("ec2:RunInstances", "sagemaker:CreateTrainingJob")


class DenialRefused(Exception):
    """AWS (or the tracker) refuses this part of a deny for good: not retried."""

    result = "failed"


class PrincipalAtQuota(DenialRefused):
    """IAM refused to attach: the principal has as many managed policies as it may."""


def deny_document(tags: Mapping[str, str]) -> dict[str, Any]:
    """Deny launching (or tagging into) the scope: requests carrying every scope tag."""
    conditions = {f"aws:RequestTag/{k}": v for k, v in sorted(tags.items())}
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "DenyLaunchInBudgetScope",
                "Effect": "Deny",
                "Action": list(DENIED_LAUNCHES),
                "Resource": "*",
                "Condition": {"StringEquals": conditions},
            },
            {
                "Sid": "DenyTaggingIntoBudgetScope",
                "Effect": "Deny",
                "Action": ["ec2:CreateTags"],
                "Resource": "*",
                "Condition": {"StringEquals": conditions},
            },
        ],
    }


def policy_name(action_id: str) -> str:
    """A policy name from the action id (IAM: [\\w+=,.@-], at most 128)."""
    safe = "".join(c if c.isalnum() or c in "+=,.@-_" else "-" for c in action_id)
    return bounded_name(f"deny-launch-{safe}", action_id)


def bounded_name(name: str, action_id: str, limit: int = 128) -> str:
    """``name`` if it fits; else its head and a digest of the whole action id, so two
    actions of a long budget id (its period and threshold cut off) never share one."""
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(action_id.encode()).hexdigest()[:16]
    return f"{name[: limit - 17]}-{digest}"


def account_of(arn: str) -> str:
    """The account an IAM ARN names (``arn:aws:iam::<account>:...``)."""
    return arn.split(":")[4]


def _principal(arn: str) -> tuple[str, str]:
    """("role" | "user" | "group", name) of an IAM principal ARN."""
    resource = arn.split(":", 5)[-1]
    kind, _, rest = resource.partition("/")
    if kind not in ("role", "user", "group") or not rest:
        raise ValueError(f"not an IAM role, user or group ARN: {arn}")
    return kind, rest.rsplit("/", 1)[-1]


class IamLaunchDenial:
    """One policy per action and account; ``clients``: the one client factory (or one
    IAM client, for every account)."""

    via = "iam"

    def __init__(self, clients: Any, partition: str = "aws") -> None:
        self._clients = factory_of(clients)
        self._partition = partition

    def _iam(self, account: str) -> Any:
        return self._clients.client_for("iam", account)

    def ensure_policy(self, action_id: str, tags: Mapping[str, str], account: str) -> str:
        """The deny policy's ARN in ``account``, created under the tracker's path if it is
        not there."""
        name = policy_name(action_id)
        iam = self._iam(account)
        try:
            created = iam.create_policy(
                PolicyName=name,
                Path=POLICY_PATH,
                PolicyDocument=json.dumps(deny_document(tags)),
                Description=f"costtracker budget action {action_id}: deny launches in scope",
            )
            return str(created["Policy"]["Arn"])
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "EntityAlreadyExists":
                raise
        # Made by an earlier try (its answer lost): the same name on the same path.
        arn = f"arn:{self._partition}:iam::{account}:policy{POLICY_PATH}{name}"
        return str(iam.get_policy(PolicyArn=arn)["Policy"]["Arn"])

    def attach(self, policy_arn: str, principal_arn: str) -> None:
        self._check_path(policy_arn, principal_arn)
        kind, name = _principal(principal_arn)
        try:
            getattr(self._iam(account_of(principal_arn)), f"attach_{kind}_policy")(
                **{f"{kind.capitalize()}Name": name, "PolicyArn": policy_arn}
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "LimitExceeded":
                raise PrincipalAtQuota(f"{principal_arn}: {exc}") from exc
            raise

    def detach(self, policy_arn: str, principal_arn: str) -> None:
        self._check_path(policy_arn, principal_arn)
        kind, name = _principal(principal_arn)
        try:
            getattr(self._iam(account_of(principal_arn)), f"detach_{kind}_policy")(
                **{f"{kind.capitalize()}Name": name, "PolicyArn": policy_arn}
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "NoSuchEntity":
                raise  # not attached (any more): nothing to detach

    def delete_policy(self, policy_arn: str) -> None:
        """Delete a lifted deny (gone already: nothing to do; still attached somewhere,
        ``DeleteConflict``: raised, the next lift tries again)."""
        self._check_path(policy_arn)
        try:
            self._iam(account_of(policy_arn)).delete_policy(PolicyArn=policy_arn)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "NoSuchEntity":
                raise

    @staticmethod
    def _check_path(policy_arn: str, principal_arn: str = "") -> None:
        if f":policy{POLICY_PATH}" not in policy_arn:
            raise ValueError(f"{policy_arn} is not a policy under {POLICY_PATH}")
        if principal_arn and account_of(principal_arn) != account_of(policy_arn):
            raise ValueError(f"{policy_arn} is not in the account of {principal_arn}")
