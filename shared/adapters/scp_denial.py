"""deny_launch as a service control policy, where the tracker runs in the management
account or an Organizations delegated administrator (``ledger.budget_actions.deny_with``
``"scp"``): one SCP per action, named under the tracker's prefix (``costtracker-``),
attached to each of the scope's member accounts, detached and deleted when lifted. It is
never attached to the management account (an SCP does not restrict it anyway): that part
is refused, and says so."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from botocore.exceptions import ClientError

from shared.adapters.launch_denial import DenialRefused, bounded_name, deny_document

SCP = "SERVICE_CONTROL_POLICY"
SCP_PREFIX = "costtracker-"


class ManagementAccountRefused(DenialRefused):
    """An SCP on the management account: refused (SCPs never restrict it)."""

    result = "refused"


def scp_name(action_id: str) -> str:
    """The SCP's name (Organizations: at most 128 characters)."""
    return bounded_name(f"{SCP_PREFIX}deny-launch-{action_id}", action_id)


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


class ScpLaunchDenial:
    """``organizations``: the Organizations client of the tracker's own account;
    ``management_account``: configured, or read once (DescribeOrganization)."""

    via = "scp"

    def __init__(self, organizations: Any, management_account: str | None = None) -> None:
        self._org = organizations
        self._management = management_account

    def management_account(self) -> str:
        if not self._management:
            found = self._org.describe_organization()["Organization"]["MasterAccountId"]
            self._management = str(found)
        return self._management

    def ensure_policy(self, action_id: str, tags: Mapping[str, str], account: str = "") -> str:
        """The SCP's id, created if it is not there (one per action, for every account)."""
        name = scp_name(action_id)
        try:
            created = self._org.create_policy(
                Name=name,
                Type=SCP,
                Content=json.dumps(deny_document(tags)),
                Description=f"costtracker budget action {action_id}: deny launches in scope"[:512],
            )
            return str(created["Policy"]["PolicySummary"]["Id"])
        except ClientError as exc:
            if _code(exc) != "DuplicatePolicyException":
                raise
        # Made by an earlier try (its answer lost): find it by its name.
        for page in self._org.get_paginator("list_policies").paginate(Filter=SCP):
            for policy in page.get("Policies", []):
                if policy.get("Name") == name:
                    return str(policy["Id"])
        raise LookupError(f"SCP {name} exists but is not listed")

    def attach(self, policy_id: str, account: str) -> None:
        if account == self.management_account():
            raise ManagementAccountRefused(
                f"{account} is the management account: an SCP never restricts it, "
                "so none is attached there"
            )
        try:
            self._org.attach_policy(PolicyId=policy_id, TargetId=account)
        except ClientError as exc:
            if _code(exc) != "DuplicatePolicyAttachmentException":
                raise

    def detach(self, policy_id: str, account: str) -> None:
        try:
            self._org.detach_policy(PolicyId=policy_id, TargetId=account)
        except ClientError as exc:
            if _code(exc) not in ("PolicyNotAttachedException", "PolicyNotFoundException"):
                raise

    def delete_policy(self, policy_id: str) -> None:
        try:
            self._org.delete_policy(PolicyId=policy_id)
        except ClientError as exc:
            if _code(exc) != "PolicyNotFoundException":
                raise


def organizations_region(partition: str) -> str:
    """Organizations' endpoint region in a partition (a global service)."""
    return {"aws-cn": "cn-northwest-1", "aws-us-gov": "us-gov-west-1"}.get(partition, "us-east-1")
