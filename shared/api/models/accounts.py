"""Responses of ``GET /accounts`` (admins): the member accounts' health."""

from __future__ import annotations

from pydantic import Field

from shared.api.models.base import Instant, Reply


class AccountHealthReply(Reply):
    """One member account, as the tracker last saw it (null: not seen / not tried)."""

    account: str
    events_last_seen: dict[str, Instant] = Field(
        description="kind of event (ec2_state, spot, alarm, sagemaker, checkpoint, fsx, "
        "capacity_block, other) -> when one last arrived from this account"
    )
    role_assumable: bool | None = Field(
        description="whether the member role could be assumed at the last try; null: never tried"
    )
    role_checked_at: Instant | None
    last_sweep: dict[str, Instant] = Field(description="region -> last sweep of its first page")
    alarms_in_place: dict[str, int] = Field(
        description="region -> the tracker's alarms found there at that sweep"
    )
    last_error: str | None
    last_error_at: Instant | None


class AccountsReply(Reply):
    accounts: list[AccountHealthReply]
    list_fetched_at: Instant | None = Field(
        description="when the organisation's account list was last fetched; null: "
        "no list (allow-list only, or not fetched yet)"
    )
