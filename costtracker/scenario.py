"""The replay scenario (SPEC "The replay interface"), validated with clear errors."""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from shared.config import PriceOverrides


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow")


class VolumeSpec(_Model):
    volume_id: str = ""
    size_gib: int = Field(ge=1, le=65536)
    volume_type: str = Field(default="gp3", min_length=1, max_length=32)
    iops: int | None = Field(default=None, ge=0, le=1_000_000)
    throughput: int | None = Field(default=None, ge=0, le=100_000)  # MB/s


class InstanceSpec(_Model):
    instance_id: str = Field(pattern=r"^i-[0-9a-f]{8,17}$")
    instance_type: str
    lifecycle: Literal["on-demand", "spot", "capacity-block"] = "on-demand"
    platform: str = "Linux/UNIX"
    availability_zone: str = ""
    tags: dict[str, str] = Field(default_factory=dict)
    volumes: list[VolumeSpec] = Field(default_factory=list)
    account: str | None = Field(default=None, pattern=r"^\d{12}$")
    region: str | None = None
    capacity_reservation_id: str = ""


class Scenario(_Model):
    region: str = "us-east-1"
    account: str = "123456789012"
    prices: PriceOverrides | None = None
    checkpoint: dict[str, Any] | None = None
    utilization: dict[str, Any] | None = None
    discounts: dict[str, Decimal] | None = None
    instances: list[InstanceSpec] = Field(default_factory=list)
    budgets: list[dict[str, Any]] = Field(default_factory=list)
    # Events stay raw: a malformed one must reach the handler and be reported there.
    events: list[Any] = Field(default_factory=list)
    until: AwareDatetime | None = None

    def event_times(self) -> list[datetime]:
        from shared.clock import utc

        times = []
        for event in self.events:
            try:
                times.append(utc(datetime.fromisoformat(str(event["time"]).replace("Z", "+00:00"))))
            except (KeyError, TypeError, ValueError):
                continue
        return times


def load_scenario(path: str | Path) -> Scenario:
    return Scenario.model_validate(json.loads(Path(path).read_text()))
