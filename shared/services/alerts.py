"""Posting alerts through the outbox: recorded first, then sent, then marked sent.

A failed publish (throttling, a KMS error on the topic key, a subject SNS refuses)
leaves the alert pending; the next run (every budget tick) sends it again, until SNS
accepts it. An alert id is recorded once, ever: an episode alerts once, and an old
episode never alerts again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from shared.adapters.notify import Alert, Notifier
from shared.adapters.outbox import OutboxStore, alert_of

logger = logging.getLogger("costtracker.alerts")


class _Refusals:
    """How many publishes SNS refused in this process: the local replay reads it to run
    the next tick (the deployed tick runs every minute anyway)."""

    count = 0


@dataclass(frozen=True)
class AlertPoster:
    outbox: OutboxStore
    notifier: Notifier

    def post(self, alert: Alert, now: datetime) -> str:
        """``sent``, ``pending`` (recorded, publish failed: re-sent later) or ``known``."""
        if not self.outbox.record(alert, now):
            return "known"
        return self._send(alert, now)

    def _send(self, alert: Alert, now: datetime) -> str:
        try:
            self.notifier.send(alert)
        except Exception as exc:  # kept pending: the next run sends it again
            logger.warning(
                "alert not accepted by SNS: kept pending",
                extra={"alert_id": alert.alert_id, "error": str(exc)},
            )
            self.outbox.note_failure(alert.alert_id, str(exc))
            _Refusals.count += 1
            return "pending"
        self.outbox.mark_sent(alert.alert_id, now)
        return "sent"

    def resend_pending(self, now: datetime) -> tuple[int, int]:
        """(sent, still pending) of the alerts recorded but not yet accepted."""
        sent = pending = 0
        for item in self.outbox.pending():
            if self._send(alert_of(item), now) == "sent":
                sent += 1
            else:
                pending += 1
        return sent, pending


def refusals() -> int:
    return _Refusals.count
