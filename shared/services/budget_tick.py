"""The budget tick: evaluate every budget (and, at midnight, the anomalies), recording
alerts in the outbox without any SNS call; then, in what is left of the run, the re-send
path delivers what the outbox holds. A brown-out of SNS delays alerts; it never stops
a budget from being evaluated."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from shared.adapters.budget_store import BudgetStore
from shared.adapters.notify import Notifier
from shared.adapters.outbox import OutboxStore
from shared.config.ledger import LedgerConfig
from shared.services.action_deps import ActionDeps
from shared.services.alerts import AlertPoster, Delivery
from shared.services.budget_anomalies import check_anomalies
from shared.services.budgets import evaluate_budgets
from shared.services.deps import LedgerDeps


@dataclass(frozen=True)
class Tick:
    alerts: list[str]  # recorded by this run (budget:threshold, budget:forecast, ...)
    failed_budgets: list[str]
    delivery: Delivery
    # No alert can be due before this unless an event arrives (see ``Evaluation``).
    quiet_until: datetime
    quiet_regardless_of_events: bool


def run_tick(
    deps: LedgerDeps,
    store: BudgetStore,
    config: LedgerConfig,
    notifier: Notifier,
    now: datetime,
    seconds_left: Callable[[], float],
    acts: ActionDeps | None = None,
    only: str | None = None,
) -> Tick:
    """``seconds_left`` is the run's remaining time (the re-send path's budget); ``only``
    evaluates one budget (a crossing timer's), and skips the daily anomaly check."""
    evaluation = evaluate_budgets(deps, store, config, now, acts, only)
    alerts = list(evaluation.sent)
    if only is None and now.hour == 0 and now.minute == 0 and now.second == 0:
        alerts += check_anomalies(deps, store, config, now)
    delivery = AlertPoster(OutboxStore(deps.table), notifier).deliver_pending(now, seconds_left)
    quiet, regardless = evaluation.quiet_until, evaluation.quiet_regardless_of_events
    if delivery.next_due is not None:  # the outbox still holds alerts: wake for them
        quiet, regardless = max(min(quiet, delivery.next_due), now), False
    return Tick(alerts, evaluation.failed, delivery, quiet, regardless)
