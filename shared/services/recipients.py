"""A budget's recipients set through the API get email: subscribed when a budget first
names them, unsubscribed when no budget names them any more (see
shared/adapters/subscriptions.py for the filter).

The API touches only the subscriptions it made: each one's ARN is recorded when it is
made (``SubscriptionRecords``), and only a recorded one is ever unsubscribed. An address
that already has a subscription the API did not make (finance's own unfiltered one from
``finance_emails``, or one the stack made for a budget in CDK context) is left as it is:
it already receives the budget's alerts, and removing the address from a budget never
removes that subscription. Only an address the edited budget named can be removed, and
only once no budget in effect names it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

from shared.adapters.budget_store import SUBSCRIBING
from shared.adapters.subscriptions import PENDING, RecipientSubscriptions
from shared.config.budgets import Budget


class SubscriptionRecords(Protocol):
    """Where the API records the subscriptions it made (``BudgetStore``)."""

    def api_subscriptions(self) -> dict[str, str]: ...

    def record_api_subscription(self, email: str, subscription_arn: str) -> None: ...

    def clear_api_subscription(self, email: str) -> None: ...


@dataclass
class RecipientChanges:
    subscribed: list[str] = field(default_factory=list)  # confirmation email sent
    already: list[str] = field(default_factory=list)
    unsubscribed: list[str] = field(default_factory=list)
    # Removed before confirming: SNS cannot unsubscribe them; they receive nothing (no
    # alert names them) and SNS deletes them after three days.
    left_unconfirmed: list[str] = field(default_factory=list)
    # No budget names them any more, but their subscription is not one the API made (the
    # stack's, or finance's own): it is left as it is.
    not_ours: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, list[str]]:
        return {k: sorted(v) for k, v in self.__dict__.items()}


def _named(budgets: Iterable[Budget | None]) -> set[str]:
    return {e.lower() for b in budgets if b is not None for e in b.recipients}


def subscribe_added(
    subscriptions: RecipientSubscriptions,
    records: SubscriptionRecords,
    before: Budget | None,
    after: Budget | None,
) -> RecipientChanges:
    """Subscribe the addresses ``after`` names and ``before`` did not, and that have no
    subscription yet (before the change is recorded: a failure leaves nothing half done,
    and a retry is harmless)."""
    changes = RecipientChanges()
    added = _named([after]) - _named([before])
    if not added:
        return changes
    existing = subscriptions.existing()
    ours = records.api_subscriptions()
    for email in sorted(added):
        recorded = ours.get(email)
        if email in existing and recorded != SUBSCRIBING:
            # Ours already, or someone else's (never recorded as ours): nothing to make.
            changes.already.append(email)
            continue
        # The intent first: a retry after a failure below still knows it is ours.
        records.record_api_subscription(email, SUBSCRIBING)
        records.record_api_subscription(email, subscriptions.subscribe(email))
        changes.subscribed.append(email)
    return changes


def unsubscribe_removed(
    subscriptions: RecipientSubscriptions,
    records: SubscriptionRecords,
    before: Budget | None,
    after: Budget | None,
    budgets_now: Iterable[Budget],
    changes: RecipientChanges,
) -> RecipientChanges:
    """Unsubscribe the addresses ``before`` named that no budget names any more, where the
    subscription is the one the API made."""
    gone = _named([before]) - _named([after]) - _named(budgets_now)
    if not gone:
        return changes
    existing = subscriptions.existing()
    ours = records.api_subscriptions()
    for email in sorted(gone):
        listed, recorded = existing.get(email), ours.get(email)
        if recorded is None:
            if listed is not None:
                changes.not_ours.append(email)
            continue
        if listed is None:  # gone already (SNS deleted it unconfirmed, or by hand)
            records.clear_api_subscription(email)
        elif listed == PENDING or not listed.startswith("arn:"):
            changes.left_unconfirmed.append(email)  # still recorded: removable later
        elif listed == recorded:
            subscriptions.unsubscribe(recorded)
            records.clear_api_subscription(email)
            changes.unsubscribed.append(email)
        else:  # the address's subscription now is not the one the API made
            records.clear_api_subscription(email)
            changes.not_ours.append(email)
    return changes


def change_budget(
    subscriptions: RecipientSubscriptions | None,
    records: SubscriptionRecords,
    before: Budget | None,
    after: Budget | None,
    record: Callable[[], list[Budget]],
) -> dict[str, list[str]]:
    """Subscribe added recipients, record the change (``record`` returns the budgets in
    effect afterwards), then unsubscribe the addresses no budget names any more."""
    if subscriptions is None:  # no finance topic (a local API without alerts)
        record()
        return RecipientChanges().as_dict()
    changes = subscribe_added(subscriptions, records, before, after)
    budgets_now = record()
    return unsubscribe_removed(
        subscriptions, records, before, after, budgets_now, changes
    ).as_dict()
