"""Responses of the budget routes and of the daily summaries and reconciliations."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import MISSING, Field

from shared.api.models.base import Day, Instant, Money, Reply


class Scope(Reply):
    """Exactly one of: a job, a tag match (keys ANDed), the whole account."""

    job: str | None
    tag: dict[str, str] | None
    account: bool


class ThresholdCrossing(Reply):
    """One threshold of the one forecast."""

    threshold: int
    amount_usd: Money
    state: Literal["crossed", "projected", "possible", "not_projected"] = Field(
        description="crossed: spend has reached it; projected: the central projection "
        "crosses it in the period (at); possible: only the range's high end does (high_at); "
        "not_projected: neither"
    )
    at: Instant | None = Field(description="the central projection's crossing moment")
    high_at: Instant | None = Field(description="the range's high end's crossing moment")


class JobForecast(Reply):
    """How one running job was projected."""

    job_id: str
    method: Literal["declared_end", "assumed_duration"] = Field(
        description="declared_end: to its expected-duration-hours tag; assumed_duration: "
        "the forecast's stated assumption, given how long it is known to have run"
    )
    end: Instant
    low_end: Instant
    high_end: Instant
    known_hours: float
    declared_hours: str | None
    past_declared_end: bool


class Forecast(Reply):
    """The budget's one forecast for its period (the alerts, CLI and dashboard show it)."""

    total_usd: Money
    low_usd: Money
    high_usd: Money
    until: Instant
    range: str = Field(description="what the range (low_usd, high_usd) means")
    assumption: str = Field(description="how a job without a declared end is projected")
    revises_at: Instant | None = Field(
        description="when, with no new event, a running job outlives the low end of its "
        "range (or its declared end) and the forecast is made again"
    )
    crossings: list[ThresholdCrossing]
    jobs: list[JobForecast]


class ActionRule(Reply):
    """What a budget does at a threshold beyond its alert."""

    at: int
    do: Literal["notify", "stop_after_checkpoint", "stop_now", "deny_launch"]
    dry_run: bool = Field(description="true (the default): recorded and announced only")
    grace_minutes: int | None


class ActionReleased(Reply):
    """A budget action after its release: nothing more happens to it this period."""

    action_id: str
    budget_id: str
    kind: str
    state: Literal["released"]
    fired_at: Instant | None = Field(description="null: released before it fired")
    acted_at: Instant | None
    dry_run: bool
    released_by: str = Field(description="the caller's IAM ARN")
    released_at: Instant
    cancelled: list[str] = Field(description="instances and training jobs no longer stopped")
    detached: bool = Field(description="a deny policy was detached")


class BudgetState(Reply):
    """A budget as defined, where it comes from, and its spend in the current period."""

    budget_id: str
    scope: Scope
    amount_usd: Money
    period: Literal["total", "month", "day"]
    thresholds: list[int]
    actions: list[ActionRule]
    recipients: list[str] | None = Field(
        description="the addresses its alerts go to; null: shown to finance and admins only"
    )
    since: Day | None
    source: Literal["context", "api"] = Field(
        description="context: defined in CDK context (ledger.budgets); api: set through the API"
    )
    period_key: str
    period_start: Instant
    period_end: Instant | None
    spend_usd: Money
    percent: str
    burn_rate_usd_per_hour: Money
    projected_total_usd: Money = Field(description="the forecast's central projection")
    projected_low_usd: Money
    projected_high_usd: Money
    projected_until: Instant
    crossing_100_at: Instant | None = Field(
        description="when the central projection crosses 100 % (null: crossed already, or "
        "not in the period)"
    )
    high_crossing_at: Instant | None = Field(
        description="when only the range's high end crosses 100 % (the central does not)"
    )
    forecast: Forecast
    spend_by_job: dict[str, Money]


class Budgets(Reply):
    budgets: list[BudgetState]


class Subscriptions(Reply):
    """What became of the recipients' email subscriptions."""

    subscribed: list[str] = Field(description="a confirmation email was sent")
    already: list[str]
    unsubscribed: list[str]
    left_unconfirmed: list[str] = Field(
        description="removed before confirming: they receive nothing and SNS deletes them"
    )
    not_ours: list[str] = Field(
        description="no budget names them any more, but their subscription was not made by "
        "the API (the stack's, or finance's own): left as it is"
    )


class BudgetSet(BudgetState):
    subscriptions: Subscriptions


class BudgetDeleted(Reply):
    budget_id: str
    deleted: bool
    subscriptions: Subscriptions


class BudgetChange(Reply):
    at: Instant
    who: str = Field(description="the caller's IAM ARN")
    role: str
    action: Literal["create", "update", "delete"]
    before: dict[str, Any] | None = Field(description="the budget before (null: absent)")
    after: dict[str, Any] | None = Field(description="the budget after (null: deleted)")


class BudgetHistory(Reply):
    budget_id: str
    changes: list[BudgetChange]


class SummaryDay(Reply):
    """One day of GET /summaries: its totals when a summary is stored (``available``),
    split by the ``group_by`` tag's values when asked."""

    date: Day
    available: bool
    total_usd: Money | MISSING = MISSING
    untagged_usd: Money | MISSING = MISSING
    by_tag: dict[str, Money] | MISSING = MISSING


class SummaryDays(Reply):
    model_config = Reply.model_config | {"populate_by_name": True}

    from_: Day = Field(alias="from")
    to: Day
    group_by: str | None
    days: list[SummaryDay]
