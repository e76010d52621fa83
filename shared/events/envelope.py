"""The EventBridge envelope every event function parses first, and the schedule tick.

Apart from the models of each kind of event (``shared.events.aws``), so that a scheduled
function parses its tick without creating every event model at cold start.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationInfo, field_validator

INSTANCE_ID_PATTERN = r"^i-[0-9a-f]{8,17}$"
SEQUENCER_PATTERN = r"^[0-9A-Fa-f]{0,64}$"
# An AWS account id is 12 digits; anything else ("123456789012#x") would key a second
# record of the same account.
ACCOUNT_ID_PATTERN = r"^[0-9]{12}$"
# A region looks like us-east-1, eu-central-2, us-gov-west-1 or cn-north-1.
REGION_PATTERN = r"^[a-z]{2,4}(-[a-z]+)+-\d{1,2}$"
# Event times from EC2's launch (2006) to 2100: a time outside is a mistake or an attack
# (a replay from year 999 would walk every minute since), never a real event.
EARLIEST_EVENT_YEAR, LATEST_EVENT_YEAR = 2006, 2100


class _Detail(BaseModel):
    model_config = ConfigDict(populate_by_name=False, frozen=True, defer_build=True)


class AwsEvent(BaseModel):
    """EventBridge envelope: the fields (and the Scheduler's ``"{}"`` detail) of Powertools'
    ``EventBridgeModel``, whose package would cost each handler's cold start its parser
    (see ``shared.config.base._Config``); ``version`` defaults to "0" (AWS doc samples omit it)."""

    model_config = ConfigDict(populate_by_name=False, frozen=True, defer_build=True)

    version: str = "0"
    id: str
    source: str
    account: str = Field(pattern=ACCOUNT_ID_PATTERN)
    time: AwareDatetime
    region: str = Field(pattern=REGION_PATTERN)
    resources: list[str] = Field(default_factory=list)
    detail_type: str = Field(alias="detail-type")
    detail: dict[str, Any] | BaseModel
    replay_name: str | None = Field(default=None, alias="replay-name")

    @field_validator("time")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        return to_utc(value)

    @field_validator("detail", mode="before")
    @classmethod
    def _scheduler_detail(cls, value: object, info: ValidationInfo) -> object:
        """EventBridge Scheduler sends ``"{}"`` as the detail of an empty payload."""
        return {} if info.data.get("source") == "aws.scheduler" and value == "{}" else value


class ScheduledEvent(AwsEvent):
    """An EventBridge schedule tick; ``time`` is the moment the work is due."""

    source: Literal["aws.events", "aws.scheduler"]
    detail_type: Literal["Scheduled Event"] = Field(alias="detail-type")
    detail: dict[str, object] = Field(default_factory=dict)


class SummaryTick(ScheduledEvent):
    """The daily summary's tick: it summarizes the day before and compares it with the
    week before that, so a tick in the first eight days of year 1 names no such days."""

    @field_validator("time")
    @classmethod
    def _has_a_week_before(cls, value: datetime) -> datetime:
        if value.date() < date.min + timedelta(days=8):
            raise ValueError("no day before it to summarize (year 1)")
        return value


def to_utc(value: datetime) -> datetime:
    """In UTC, or a validation error for a time UTC cannot hold (year 1 or 9999 offsets)
    or one outside the years events can carry (``in_event_years``)."""
    try:
        utc_value = value.astimezone(UTC)
    except OverflowError as exc:
        raise ValueError("time out of range once converted to UTC") from exc
    if not in_event_years(utc_value):
        raise ValueError(
            f"time {utc_value.isoformat()} is outside the years "
            f"{EARLIEST_EVENT_YEAR}-{LATEST_EVENT_YEAR} an AWS event can carry"
        )
    return utc_value


def in_event_years(value: datetime) -> bool:
    return EARLIEST_EVENT_YEAR <= value.year <= LATEST_EVENT_YEAR


def event_id_of(raw: object) -> str:
    """The event id for logs, even when the rest of the event is unreadable; characters a
    UTF-8 log cannot carry (lone surrogates) are escaped so the log line is not lost."""
    if isinstance(raw, dict):
        value = raw.get("id")
        if isinstance(value, str):
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
    return "<no id>"
