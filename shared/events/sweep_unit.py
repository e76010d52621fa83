"""One unit of sweep work (an SQS message body): one account, one region, one page of
DescribeInstances. A page that has more passes its ``NextToken`` on as a new unit, so
no unit (and no invocation) grows with the organisation or the fleet."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from shared.events.envelope import ACCOUNT_ID_PATTERN, REGION_PATTERN

MAX_TOKEN_CHARS = 4096  # EC2's NextToken is opaque but short (hundreds of characters)


class SweepUnit(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    kind: Literal["instances"] = "instances"
    account: str = Field(pattern=ACCOUNT_ID_PATTERN)
    region: str = Field(pattern=REGION_PATTERN)
    # None: the first page (it also checks the ledger's open instances of the account
    # and region that EC2 may no longer list).
    next_token: str | None = Field(default=None, max_length=MAX_TOKEN_CHARS)
    page: int = Field(default=1, ge=1, le=100_000)
    page_size: int = Field(default=1000, ge=5, le=1000)
    # The sweep (its scheduled tick's id) this unit belongs to: in the logs and the
    # health record, never in a key.
    sweep_id: str = Field(default="", max_length=128)

    def following(self, token: str) -> SweepUnit:
        """The unit of the next page."""
        return self.model_copy(update={"next_token": token, "page": self.page + 1})

    @property
    def label(self) -> str:
        return f"{self.kind}:{self.account}:{self.region}:p{self.page}"
