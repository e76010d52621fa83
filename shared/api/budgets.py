"""Budgets: each one's spend in its current period (a team member: their team's), and
their administration by finance and admins (every change recorded, recipients'
subscriptions following it). A budget defined in CDK context is not changed here (409)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Literal

from aws_lambda_powertools.event_handler.openapi.params import Body, Path
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shared.api.access import Caller
from shared.api.caller import access, new_router, runtime_of
from shared.api.errors import ApiProblem, bad_input, from_validation_errors, not_found
from shared.api.models.budgets import (
    ActionReleased,
    BudgetDeleted,
    BudgetHistory,
    Budgets,
    BudgetSet,
    BudgetState,
)
from shared.config.budget_actions import BudgetAction
from shared.config.budgets import BUDGET_ID, Budget, BudgetScope
from shared.reports.formatting import iso

if TYPE_CHECKING:
    from shared.services.budgets import JobCache

router = new_router()
BudgetId = Annotated[str, Path(pattern=BUDGET_ID)]
ActionId = Annotated[str, Path(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,255}$")]


class BudgetBody(BaseModel):
    """A budget as PUT by a caller; the id comes from the path."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    scope: BudgetScope
    amount_usd: Decimal = Field(gt=0, max_digits=16, decimal_places=6)
    period: Literal["total", "month", "day"] = "total"
    thresholds: list[int] = Field(default=[50, 80, 100], min_length=1, max_length=20)
    recipients: list[str] = Field(default_factory=list, max_length=20)
    since: date | None = None
    actions: list[BudgetAction] = Field(default_factory=list, max_length=10)


def _state(
    budget: Budget, source: str, cache: JobCache | None = None, *, recipients_shown: bool = True
) -> BudgetState:
    """The budget's state; its recipients (people's addresses) only to finance and admins."""
    from shared.services.budget_admin import budget_state

    rt = runtime_of(router)
    config = rt.settings.config
    now = rt.clock.now()
    state = budget_state(rt.ledger_deps(), config, budget, source, now, cache)
    if not recipients_shown:
        state["recipients"] = None
    return BudgetState.model_validate(state)


def _sources() -> dict[str, str]:
    from shared.services.budget_admin import budget_sources

    rt = runtime_of(router)
    return budget_sources(rt.settings.config, rt.budget_store.stored_budgets())


@router.get("/budgets")
def list_budgets() -> Budgets:
    """Every budget with its spend so far in the current period (a team member: the
    budgets scoped to their team, without their recipients' addresses)."""
    from shared.services.budget_admin import budget_sources
    from shared.services.budgets import JobCache, effective_budgets

    rt = runtime_of(router)
    policy = access(router)
    config = rt.settings.config
    stored = rt.budget_store.stored_budgets()  # one Query, used twice
    sources = budget_sources(config, stored)
    budgets = [
        b for b in effective_budgets(rt.budget_store, config, stored) if policy.may_see_budget(b)
    ]
    cache = JobCache(rt.ledger_deps())  # every job's rollups are read once
    shown = policy.sees_everything
    return Budgets(
        budgets=[
            _state(b, sources.get(b.budget_id, "api"), cache, recipients_shown=shown)
            for b in budgets
        ]
    )


@router.get("/budgets/<budget_id>")
def get_budget(budget_id: BudgetId) -> BudgetState:
    from shared.services.budgets import effective_budgets

    rt = runtime_of(router)
    access(router).finance_or_admin("a single budget")
    for budget in effective_budgets(rt.budget_store, rt.settings.config):
        if budget.budget_id == budget_id:
            return _state(budget, _sources().get(budget_id, "api"))
    raise not_found("budget_id", f"no budget {budget_id!r}")


@router.put("/budgets/<budget_id>")
def put_budget(budget_id: BudgetId, body: Annotated[BudgetBody, Body()]) -> BudgetSet:
    """Create or replace a budget; it is validated like a budget in CDK context. The
    change is recorded (GET /budgets/{budget_id}/history)."""
    rt = runtime_of(router)
    caller = access(router).finance_or_admin("setting budgets")
    _refuse_context_budget(budget_id, "changed")
    try:
        budget = Budget.model_validate({"budget_id": budget_id, **body.model_dump()})
        budget.check_tag_keys(rt.settings.config.known_tag_keys())
    except ValidationError as exc:
        raise from_validation_errors(exc.errors()) from exc
    except ValueError as exc:  # "scope.tag.<key>: unknown tag key (known: ...)"
        field, _, message = str(exc).partition(": ")
        raise bad_input(field, message) from exc
    before = rt.budget_store.stored_budgets().get(budget_id)
    changes = _change_budget(caller, budget_id, before, budget)
    return BudgetSet.model_validate(
        {**_state(budget, "api").model_dump(mode="json"), "subscriptions": changes}
    )


@router.delete("/budgets/<budget_id>")
def delete_budget(budget_id: BudgetId) -> BudgetDeleted:
    """Delete a budget set through the API; the deletion is recorded in its history."""
    rt = runtime_of(router)
    caller = access(router).finance_or_admin("deleting budgets")
    _refuse_context_budget(budget_id, "deleted")
    before = rt.budget_store.stored_budgets().get(budget_id)
    if before is None:
        raise not_found("budget_id", f"no budget {budget_id!r}")
    changes = _change_budget(caller, budget_id, before, None)
    return BudgetDeleted.model_validate(
        {"budget_id": budget_id, "deleted": True, "subscriptions": changes}
    )


@router.get("/budgets/<budget_id>/history")
def budget_history(budget_id: BudgetId) -> BudgetHistory:
    """Every change made to a budget through the API: who (the caller's ARN), when,
    and the budget before and after (null: absent / deleted)."""
    rt = runtime_of(router)
    access(router).finance_or_admin("a budget's history")
    changes = rt.budget_store.budget_history(budget_id)
    if not changes and budget_id not in _sources():
        raise not_found("budget_id", f"no budget {budget_id!r}")
    return BudgetHistory.model_validate({"budget_id": budget_id, "changes": changes})


@router.post("/budgets/<budget_id>/actions/<action_id>/release")
def release_budget_action(budget_id: BudgetId, action_id: ActionId) -> ActionReleased:
    """Release a budget action (finance and admins): cancel a waiting stop, detach a
    deny, and suppress the action for the rest of its period. It never starts anything;
    releasing again answers the same."""
    from shared.adapters.outbox import OutboxStore
    from shared.app.action_runtime import action_deps
    from shared.domain.finance_day import calendar_of
    from shared.services.action_release import ReleaseConflict, UnknownAction, release_action
    from shared.services.alerts import AlertPoster
    from shared.services.budgets import effective_budgets

    rt = runtime_of(router)
    caller = access(router).finance_or_admin("releasing a budget action")
    config = rt.settings.config
    budget = next(
        (b for b in effective_budgets(rt.budget_store, config) if b.budget_id == budget_id), None
    )
    if budget is None:
        raise not_found("budget_id", f"no budget {budget_id!r}")
    try:
        released = release_action(
            budget,
            action_id,
            caller.arn,
            rt.clock.now(),
            calendar_of(config),
            action_deps(rt),
            AlertPoster(OutboxStore(rt.table)),
        )
    except UnknownAction as exc:
        raise not_found(
            "action_id", f"budget {budget_id!r} has no action {action_id!r} (see its alerts)"
        ) from exc
    except ReleaseConflict as exc:
        raise ApiProblem(409, f"action {action_id!r} changed meanwhile; try again") from exc
    record = released.record
    return ActionReleased.model_validate(
        {
            "action_id": record.action_id,
            "budget_id": record.budget_id,
            "kind": record.kind,
            "state": record.state,
            "fired_at": iso(record.fired_at),
            "acted_at": iso(record.acted_at),
            "dry_run": record.dry_run,
            "released_by": record.released_by,
            "released_at": iso(record.released_at),
            "cancelled": released.cancelled,
            "detached": released.detached,
        }
    )


def _refuse_context_budget(budget_id: str, verb: str) -> None:
    """Budgets from CDK context are managed where they are defined, not by the API."""
    rt = runtime_of(router)
    if any(b.budget_id == budget_id for b in rt.settings.config.budgets):
        raise ApiProblem(
            409,
            f"budget {budget_id!r} is defined in CDK context (ledger.budgets) and cannot be "
            f"{verb} through the API; change it there and deploy",
            "budget_id",
        )


def _change_budget(
    caller: Caller, budget_id: str, before: Budget | None, after: Budget | None
) -> dict[str, list[str]]:
    """Record the change; the recipients' email subscriptions follow it."""
    from shared.adapters.accounts import aws_errors
    from shared.adapters.subscriptions import RecipientSubscriptions
    from shared.services.budget_admin import record_change
    from shared.services.budgets import effective_budgets
    from shared.services.recipients import change_budget

    rt = runtime_of(router)
    topic = rt.settings.finance_topic_arn
    subscriptions = RecipientSubscriptions(rt.client("sns"), topic) if topic else None

    def record() -> list[Budget]:
        now = rt.clock.now()
        record_change(rt.budget_store, caller.arn, caller.role, budget_id, before, after, now)
        return effective_budgets(rt.budget_store, rt.settings.config)

    try:
        return change_budget(subscriptions, rt.budget_store, before, after, record)
    except aws_errors() as exc:
        raise ApiProblem(
            503, f"the recipients' email subscriptions could not be changed ({exc}); try again"
        ) from exc
