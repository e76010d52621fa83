"""The replay scenario (SPEC "The replay interface"), validated with clear errors."""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from shared.config import PriceOverrides

# Sane bounds for a scenario's prices (USD): the dearest EC2 instance lists at about
# $410/h, the dearest EBS or S3 storage class at well under $1/GB-month.
MAX_HOURLY_USD = Decimal(1000)
MAX_GB_MONTH_USD = Decimal(10)


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow")


class VolumeSpec(_Model):
    volume_id: str = ""
    size_gib: int = Field(ge=1, le=65536)
    volume_type: str = "gp3"


class InstanceSpec(_Model):
    instance_id: str = Field(pattern=r"^i-[0-9a-f]{8,17}$")
    instance_type: str
    lifecycle: Literal["on-demand", "spot"] = "on-demand"
    platform: str = "Linux/UNIX"
    availability_zone: str = ""
    tags: dict[str, str] = Field(default_factory=dict)
    volumes: list[VolumeSpec] = Field(default_factory=list)


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

    @field_validator("region")
    @classmethod
    def _known_region(cls, region: str) -> str:
        known = known_regions()
        if known and region not in known:
            raise ValueError(
                f"not an AWS region the emulator knows (e.g. us-east-1, eu-west-1; "
                f"{len(known)} known)"
            )
        return region

    @field_validator("prices", mode="before")
    @classmethod
    def _sane_prices(cls, prices: Any) -> Any:
        """Every price a positive, finite number within a sane bound, checked at load (a
        price of 1e30 would overflow the ledger's arithmetic at the end of the replay)."""
        if not isinstance(prices, dict):
            return prices
        for kind, bound in (
            ("ec2", MAX_HOURLY_USD),
            ("spot", MAX_HOURLY_USD),
            ("ebs_gb_month", MAX_GB_MONTH_USD),
        ):
            table = prices.get(kind)
            if isinstance(table, dict):
                for key, value in table.items():
                    _check_price(f"{kind}.{key}", value, bound)
        if prices.get("s3_gb_month") is not None:
            _check_price("s3_gb_month", prices["s3_gb_month"], MAX_GB_MONTH_USD)
        return prices

    def event_times(self) -> list[datetime]:
        from shared.clock import utc

        times = []
        for event in self.events:
            try:
                times.append(utc(datetime.fromisoformat(str(event["time"]).replace("Z", "+00:00"))))
            except (KeyError, TypeError, ValueError):
                continue
        return times


def _check_price(where: str, value: Any, bound: Decimal) -> None:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f"{where}: give a price as a number or a decimal string")
    try:
        price = Decimal(str(value))
    except ArithmeticError as exc:  # decimal.InvalidOperation
        raise ValueError(f"{where}: not a number") from exc
    if not price.is_finite() or not 0 < price <= bound:
        raise ValueError(f"{where}: a price must be positive and at most {bound} USD")


@cache
def known_regions() -> frozenset[str]:
    """Every region of the AWS partitions botocore knows (empty if it cannot say)."""
    try:
        import botocore.session

        session = botocore.session.get_session()
        regions: set[str] = set()
        for partition in session.get_available_partitions():
            regions.update(session.get_available_regions("ec2", partition))
        return frozenset(regions)
    except Exception:  # an unknown botocore layout: the emulator will say
        return frozenset()


def load_scenario(path: str | Path) -> Scenario:
    return Scenario.model_validate(json.loads(Path(path).read_text()))


def read_scenario(path: str | Path) -> Scenario:
    """The scenario at ``path``, or a one-line ``CliError`` naming the problem."""
    from pydantic import ValidationError

    from costtracker.errors import CliError, validation_summary

    try:
        text = Path(path).read_bytes().decode("utf-8")
    except FileNotFoundError as exc:
        raise CliError(f"{path}: no such file; give the path of a scenario JSON file") from exc
    except IsADirectoryError as exc:
        raise CliError(f"{path}: is a directory; give a scenario JSON file") from exc
    except OSError as exc:
        raise CliError(f"{path}: cannot read it ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise CliError(f"{path}: not a text file; a scenario is UTF-8 JSON") from exc
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from exc
    except RecursionError as exc:
        raise CliError(f"{path}: JSON nested too deeply to be a scenario") from exc
    if not isinstance(raw, dict):
        raise CliError(f'{path}: a scenario is a JSON object ({{"events": [...], ...}})')
    try:
        return Scenario.model_validate(raw)
    except ValidationError as exc:
        raise CliError(validation_summary(exc, f"{path}: ")) from exc
