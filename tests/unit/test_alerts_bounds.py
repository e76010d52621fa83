"""Alert bodies, budget evaluation and the outbox's delivery path, bounded and isolated
(issue 27): the limits come from ``shared.domain.limits``."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError

from shared.adapters.notify import Alert, fit_body
from shared.adapters.outbox import OutboxStore
from shared.config.ledger import LedgerConfig
from shared.domain import limits
from shared.services import budgets as budget_service
from shared.services.alerts import AlertPoster, backoff
from shared.services.budgets import evaluate_budgets
from tests.support import Ledger, running_jobs_ledger

T0 = datetime(2026, 11, 1, tzinfo=UTC)
JOBS = ("alpha", "beta", "gamma")
CONFIG = LedgerConfig.model_validate(
    {
        "live_prices": False,
        "prices": {"ec2": {"trn1.32xlarge": "10"}},
        "budgets": [
            {
                "budget_id": job,
                "scope": {"job": job},
                "amount_usd": "5",
                "period": "total",
                "thresholds": [100],
            }
            for job in JOBS
        ],
    }
)


def ledger() -> Ledger:
    out = running_jobs_ledger(JOBS, CONFIG, T0)
    out.clock.advance_to(T0 + timedelta(hours=1))
    return out


def test_a_body_over_the_limit_is_cut_at_a_line_and_says_so() -> None:
    lines = [f"  job-{n:06d}: $1.00" for n in range(5_000)]
    alert = Alert("finance", "budget", "s", "\n".join(lines), alert_id="a")
    assert len(alert.message.encode()) <= limits.ALERT_BODY_BYTES
    assert alert.message.endswith("(cut to fit the message limit; the API has the rest)")
    assert alert.message.splitlines()[-2] in lines  # whole lines only
    assert fit_body("short") == "short"


def test_one_failing_budget_is_logged_with_its_id_and_the_others_are_evaluated(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real = budget_service.budget_status

    def fails_for_beta(deps: Any, config: Any, budget: Any, now: Any, cache: Any) -> Any:
        if budget.budget_id == "beta":
            raise RuntimeError("a bad rollup")
        return real(deps, config, budget, now, cache)

    monkeypatch.setattr(budget_service, "budget_status", fails_for_beta)
    books = ledger()
    with caplog.at_level(logging.ERROR, logger="costtracker.budgets"):
        evaluation = evaluate_budgets(books.deps, books.budgets, CONFIG, books.clock.now())
    assert evaluation.failed == ["beta"]
    assert sorted(evaluation.sent) == ["alpha:100", "gamma:100"]
    assert [r.__dict__.get("budget_id") for r in caplog.records] == ["beta"]
    assert evaluation.quiet_until <= books.clock.now() + timedelta(minutes=1)  # retried


def test_refused_alerts_wait_1_2_4_minutes_up_to_the_cap() -> None:
    waits = [backoff(n) for n in range(1, 7)]
    cap = timedelta(minutes=limits.RETRY_BACKOFF_CAP_MINUTES)
    assert waits[:4] == [timedelta(minutes=m) for m in (1, 2, 4, 8)] and max(waits) == cap


class Refusing:
    def __init__(self, code: str) -> None:
        self.code = code
        self.tries = 0

    def send(self, alert: Alert) -> None:
        self.tries += 1
        raise ClientError({"Error": {"Code": self.code, "Message": "no"}}, "Publish")


def deliver_every_minute(poster: AlertPoster, minutes: int) -> None:
    for m in range(minutes):
        poster.deliver_pending(T0 + timedelta(minutes=m), lambda: 55.0)


def test_a_kms_or_throttle_refusal_is_retried_for_ever_and_never_failed() -> None:
    books = ledger()
    for code in ("KMSAccessDeniedException", "Throttling"):
        notifier = Refusing(code)
        poster = AlertPoster(OutboxStore(books.table), notifier)
        poster.record(Alert("finance", "budget", "s", "m", alert_id=code), T0)
        deliver_every_minute(poster, 60)
        item = poster.outbox.get(code)
        assert item is not None and item["state"] == "pending", code
        assert notifier.tries > limits.REFUSALS_FOR_GOOD  # backed off, still trying


def test_out_of_time_the_delivery_path_starts_no_publish() -> None:
    books = ledger()
    notifier = Refusing("Throttling")
    poster = AlertPoster(OutboxStore(books.table), notifier)
    poster.record(Alert("finance", "budget", "s", "m", alert_id="late"), T0)
    short = limits.PUBLISH_WORST_SECONDS + limits.DELIVERY_MARGIN_SECONDS - 1
    delivery = poster.deliver_pending(T0, lambda: float(short))
    assert notifier.tries == 0 and delivery.pending == 1 and delivery.next_due == T0
