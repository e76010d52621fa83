"""Posting alerts through the outbox: recorded first, then sent, then marked sent.

A failed publish (throttling, a KMS error on the topic key, SNS not answering) leaves
the alert pending with a time to try again (1, 2, 4 ... minutes, capped); the re-send
path (``deliver_pending``, run by the budget tick after evaluation, within its own time
budget) sends it again until SNS accepts it. A message SNS refuses for good (the same
refusal of the message itself several times in a row, not a throttle) is ``failed``,
and admins get a ``delivery_failed`` alert naming it. An alert id is recorded once,
ever: an episode alerts once, and an old episode never alerts again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from shared.adapters.notify import Alert, Notifier, error_code, not_answering
from shared.adapters.outbox import OutboxStore, alert_of
from shared.domain.limits import (
    DELIVERY_MARGIN_SECONDS,
    PUBLISH_WORST_SECONDS,
    REFUSALS_FOR_GOOD,
    REFUSED_FOR_GOOD_CODES,
    RETRY_BACKOFF_CAP_MINUTES,
)
from shared.reports.formatting import iso

logger = logging.getLogger("costtracker.alerts")


class _Recorded:
    """Alert ids recorded (or tried) in this process while someone watches: the local
    replay reads them after each invocation and wakes the re-send path while any is
    still pending (the deployed tick runs every minute anyway). Nobody watches in
    Lambda, so nothing is kept there."""

    watching = False
    ids: list[str] = []


def watch_recorded() -> list[str]:
    """Start keeping recorded alert ids; the caller takes them with ``take_recorded``."""
    _Recorded.watching = True
    return _Recorded.ids


def take_recorded() -> list[str]:
    ids = list(_Recorded.ids)
    _Recorded.ids.clear()
    return ids


def stop_watching() -> None:
    _Recorded.watching = False
    _Recorded.ids.clear()


@dataclass(frozen=True)
class Delivery:
    """What one run of the re-send path did; ``next_due`` is when it has work again
    (None: nothing pending)."""

    sent: int
    pending: int
    failed: list[str]
    next_due: datetime | None


def backoff(attempts: int) -> timedelta:
    """1, 2, 4 ... minutes after the ``attempts``-th failure, at most the cap."""
    return timedelta(minutes=min(2 ** max(attempts - 1, 0), RETRY_BACKOFF_CAP_MINUTES))


def delivery_failed_alert(alert: Alert, error: str, now: datetime) -> Alert:
    """The admins' alert naming an alert SNS refused for good."""
    subject = f"Alert not delivered: {alert.kind} {alert.alert_id}"
    body = "\n".join(
        [
            f"SNS refused this {alert.audience} alert for good; it will not be sent again.",
            f"alert_id: {alert.alert_id}",
            f"kind: {alert.kind}; audience: {alert.audience}; due at: {alert.at}",
            f"subject: {alert.subject}",
            f"error: {error[:500]}",
            "The record stays in the outbox (state failed) with its body.",
        ]
    )
    return Alert(
        "admin",
        "delivery_failed",
        subject,
        body,
        {"severity": "critical", "failed_alert_id": alert.alert_id[:256]},
        alert_id=f"delivery_failed:{alert.alert_id}",
        at=iso(now) or "",
    )


@dataclass(frozen=True)
class AlertPoster:
    outbox: OutboxStore
    notifier: Notifier | None = None

    def record(self, alert: Alert, now: datetime) -> str:
        """``recorded`` (pending: the re-send path sends it) or ``known``."""
        if _Recorded.watching:
            _Recorded.ids.append(alert.alert_id)
        return "recorded" if self.outbox.record(alert, now) else "known"

    def post(self, alert: Alert, now: datetime) -> str:
        """``sent``, ``pending`` (recorded, publish failed: re-sent later) or ``known``."""
        if self.record(alert, now) == "known":
            return "known"
        return self._send(alert, 0, 0, now)

    def _send(self, alert: Alert, attempts: int, refusals: int, now: datetime) -> str:
        """``sent``, ``pending``, ``failed`` or ``unanswered`` (pending; SNS timed out)."""
        if self.notifier is None:
            return "pending"
        try:
            self.notifier.send(alert)
        except Exception as exc:  # kept pending: the re-send path sends it again
            error = f"{type(exc).__name__}: {exc}"
            for_good = error_code(exc) in REFUSED_FOR_GOOD_CODES
            refusals = refusals + 1 if for_good else 0
            if refusals >= REFUSALS_FOR_GOOD and alert.kind != "delivery_failed":
                logger.error(
                    "alert refused for good: failed",
                    extra={"alert_id": alert.alert_id, "error": error},
                )
                self.outbox.mark_failed(alert.alert_id, error, now)
                self.record(delivery_failed_alert(alert, error, now), now)
                return "failed"
            if refusals >= REFUSALS_FOR_GOOD:  # the admins' own alert: no alert about it
                self.outbox.mark_failed(alert.alert_id, error, now)
                return "failed"
            logger.warning(
                "alert not accepted by SNS: kept pending",
                extra={"alert_id": alert.alert_id, "error": error},
            )
            self.outbox.note_failure(alert.alert_id, error, now + backoff(attempts + 1), refusals)
            return "unanswered" if not_answering(exc) else "pending"
        self.outbox.mark_sent(alert.alert_id, now)
        return "sent"

    def deliver_pending(self, now: datetime, seconds_left: Callable[[], float]) -> Delivery:
        """Send the pending alerts that are due, oldest first, while there is time for
        one more publish (``seconds_left`` is the run's remaining time); SNS not
        answering ends the run (the rest wait for the next one)."""
        sent = pending = 0
        failed: list[str] = []
        next_due: datetime | None = None
        for item in self.outbox.pending():
            retry_at = item.get("retry_at")
            if retry_at and datetime.fromisoformat(str(retry_at)) > now:
                pending += 1
                due = datetime.fromisoformat(str(retry_at))
                next_due = due if next_due is None else min(next_due, due)
                continue
            if seconds_left() < PUBLISH_WORST_SECONDS + DELIVERY_MARGIN_SECONDS:
                pending += 1
                next_due = now  # out of time: the next run goes on
                break
            alert = alert_of(item)
            outcome = self._send(
                alert, int(item.get("attempts", 0)), int(item.get("refusals", 0)), now
            )
            if outcome == "sent":
                sent += 1
                continue
            if outcome == "failed":
                failed.append(alert.alert_id)
                next_due = now  # the delivery_failed alert to send
                continue
            pending += 1
            retry = now + backoff(int(item.get("attempts", 0)) + 1)
            next_due = retry if next_due is None else min(next_due, retry)
            if outcome == "unanswered":
                logger.warning("SNS not answering: the rest wait for the next run")
                next_due = min(next_due, now + backoff(1))
                break
        return Delivery(sent, pending, failed, next_due)
