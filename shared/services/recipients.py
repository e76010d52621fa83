"""A budget's recipients set through the API get email: subscribed when a budget first
names them, unsubscribed when no budget names them any more (see
shared/adapters/subscriptions.py for the filter)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from shared.adapters.subscriptions import PENDING, RecipientSubscriptions
from shared.domain.budgets import Budget


@dataclass
class RecipientChanges:
    subscribed: list[str] = field(default_factory=list)  # confirmation email sent
    already: list[str] = field(default_factory=list)
    unsubscribed: list[str] = field(default_factory=list)
    # Removed before confirming: SNS cannot unsubscribe them; they receive nothing (no
    # alert names them) and SNS deletes them after three days.
    left_unconfirmed: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, list[str]]:
        return {k: sorted(v) for k, v in self.__dict__.items()}


def _named(budgets: Iterable[Budget | None]) -> set[str]:
    return {e.lower() for b in budgets if b is not None for e in b.recipients}


def subscribe_added(
    subscriptions: RecipientSubscriptions, before: Budget | None, after: Budget | None
) -> RecipientChanges:
    """Subscribe the addresses ``after`` names and ``before`` did not (before the change
    is recorded: a failure leaves nothing half done, and a retry is harmless)."""
    changes = RecipientChanges()
    added = _named([after]) - _named([before])
    if not added:
        return changes
    existing = subscriptions.existing()
    for email in sorted(added):
        if email in existing:
            changes.already.append(email)
        else:
            subscriptions.subscribe(email)
            changes.subscribed.append(email)
    return changes


def unsubscribe_removed(
    subscriptions: RecipientSubscriptions,
    before: Budget | None,
    after: Budget | None,
    budgets_now: Iterable[Budget],
    changes: RecipientChanges,
) -> RecipientChanges:
    """Unsubscribe the addresses ``before`` named that no budget names any more."""
    gone = _named([before]) - _named([after]) - _named(budgets_now)
    if not gone:
        return changes
    existing = subscriptions.existing()
    for email in sorted(gone):
        arn = existing.get(email)
        if arn is None:
            continue
        if arn == PENDING or not arn.startswith("arn:"):
            changes.left_unconfirmed.append(email)
        else:
            subscriptions.unsubscribe(arn)
            changes.unsubscribed.append(email)
    return changes


def change_budget(
    subscriptions: RecipientSubscriptions | None,
    before: Budget | None,
    after: Budget | None,
    record: Callable[[], list[Budget]],
) -> dict[str, list[str]]:
    """Subscribe added recipients, record the change (``record`` returns the budgets in
    effect afterwards), then unsubscribe the addresses no budget names any more."""
    if subscriptions is None:  # no finance topic (a local API without alerts)
        record()
        return RecipientChanges().as_dict()
    changes = subscribe_added(subscriptions, before, after)
    budgets_now = record()
    return unsubscribe_removed(subscriptions, before, after, budgets_now, changes).as_dict()
