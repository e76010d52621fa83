"""The crossing timer's SQS event: each record's body names a budget, a threshold and
the predicted moment (``shared.adapters.crossing_timers``)."""

from __future__ import annotations

import json
from datetime import datetime

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator


class TimerBody(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    budget_id: str = Field(min_length=1, max_length=128)
    threshold: int = Field(ge=1, le=1000)
    moment: AwareDatetime


class TimerRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)

    message_id: str = Field(alias="messageId")
    body: TimerBody

    @field_validator("body", mode="before")
    @classmethod
    def _json(cls, value: object) -> object:
        return json.loads(value) if isinstance(value, str) else value


class TimerEvent(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)

    records: list[TimerRecord] = Field(alias="Records", min_length=1, max_length=10)

    @property
    def id(self) -> str:
        return self.records[0].message_id

    def budgets(self) -> list[tuple[str, datetime]]:
        """Each budget once, with its earliest moment."""
        earliest: dict[str, datetime] = {}
        for record in self.records:
            body = record.body
            if body.budget_id not in earliest or body.moment < earliest[body.budget_id]:
                earliest[body.budget_id] = body.moment
        return sorted(earliest.items())
