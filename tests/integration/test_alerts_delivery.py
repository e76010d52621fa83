"""The outbox's delivery path while SNS fails (issue 27): budget evaluation makes no SNS
call (botocore's event hooks count them), a Publish that hangs costs the tick seconds,
never the budgets' evaluation (in real time, against a socket that answers nothing for
30 s, with the tick's deployed timeout), every pending alert is delivered exactly once
when SNS answers again, and an alert SNS refuses for good ends ``failed`` with a
``delivery_failed`` alert to admins naming it. Over moto SNS/SQS and the in-memory ledger.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from moto import mock_aws

from shared.adapters.accounts import client_config
from shared.adapters.notify import SnsNotifier
from shared.adapters.outbox import OUTBOX, OutboxStore
from shared.app.functions import BY_NAME
from shared.config.ledger import LedgerConfig
from shared.domain import limits
from shared.services.budget_tick import run_tick
from shared.services.budgets import evaluate_budgets
from tests.support import ACCOUNT, REGION, Ledger, running_jobs_ledger

T0 = datetime(2026, 11, 1, tzinfo=UTC)
JOBS = ("alpha", "beta", "gamma", "delta")
CONFIG = LedgerConfig.model_validate(
    {
        "live_prices": False,
        "prices": {"ec2": {"trn1.32xlarge": "10"}},
        # One budget per job: $10/h each, $5: 50 % and 100 % crossed after 30 min.
        "budgets": [
            {
                "budget_id": job,
                "scope": {"job": job},
                "amount_usd": "5",
                "period": "total",
                "thresholds": [50, 100],
            }
            for job in JOBS
        ],
    }
)
TICK_TIMEOUT = BY_NAME["budget_tick"].timeout_seconds


def running_jobs() -> Ledger:
    return running_jobs_ledger(JOBS, CONFIG, T0)


def budget_alert_ids(ledger: Ledger) -> set[str]:
    return {str(i["sk"]) for i in ledger.table.query(OUTBOX) if str(i["sk"]).startswith("budget:")}


def expected_ids() -> set[str]:
    return {f"budget:{job}:total:{t}" for job in JOBS for t in (50, 100)}


@pytest.fixture
def aws() -> Iterator[dict[str, Any]]:
    with mock_aws():
        sns = boto3.client("sns", region_name=REGION, config=client_config("sns"))
        sqs = boto3.client("sqs", region_name=REGION)
        topics, queues = {}, {}
        for audience in ("finance", "team", "admin"):
            topics[audience] = sns.create_topic(Name=f"d-{audience}")["TopicArn"]
            queues[audience] = sqs.create_queue(QueueName=f"d-{audience}")["QueueUrl"]
            arn = sqs.get_queue_attributes(QueueUrl=queues[audience], AttributeNames=["QueueArn"])[
                "Attributes"
            ]["QueueArn"]
            sns.subscribe(TopicArn=topics[audience], Protocol="sqs", Endpoint=arn)
        yield {"sns": sns, "sqs": sqs, "topics": topics, "queues": queues}


def received(aws: dict[str, Any], audience: str) -> list[dict[str, Any]]:
    out = []
    while True:
        messages = (
            aws["sqs"]
            .receive_message(QueueUrl=aws["queues"][audience], MaxNumberOfMessages=10)
            .get("Messages", [])
        )
        if not messages:
            return out
        for message in messages:
            out.append(json.loads(message["Body"]))
            aws["sqs"].delete_message(
                QueueUrl=aws["queues"][audience], ReceiptHandle=message["ReceiptHandle"]
            )


def alert_id(message: dict[str, Any]) -> str:
    return str(message["MessageAttributes"]["alert_id"]["Value"])


class SnsCalls:
    """Counts SNS API calls through botocore's event hooks (every client of the session)."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.on_first: Any = None

    def __call__(self, model: Any, **kwargs: Any) -> None:
        if not self.calls and self.on_first is not None:
            self.on_first()
        self.calls.append(model.name)


@pytest.fixture
def sns_calls(aws: dict[str, Any]) -> Iterator[SnsCalls]:
    counter = SnsCalls()
    aws["sns"].meta.events.register("before-call.sns", counter)
    yield counter
    aws["sns"].meta.events.unregister("before-call.sns", counter)


def test_evaluation_makes_no_sns_call_and_records_every_alert_first(
    aws: dict[str, Any], sns_calls: SnsCalls
) -> None:
    ledger = running_jobs()
    at = T0 + timedelta(hours=1)
    ledger.clock.advance_to(at)
    evaluation = evaluate_budgets(ledger.deps, ledger.budgets, CONFIG, at)
    assert sns_calls.calls == []  # (a): evaluation alone, no SNS call at all
    assert budget_alert_ids(ledger) == expected_ids() and len(evaluation.sent) == 8
    # The whole tick: at its first SNS call, every budget's alerts are already recorded.
    ledger2 = running_jobs()
    ledger2.clock.advance_to(at)
    seen: list[set[str]] = []
    sns_calls.on_first = lambda: seen.append(budget_alert_ids(ledger2))
    notifier = SnsNotifier(aws["sns"], aws["topics"])
    tick = run_tick(ledger2.deps, ledger2.budgets, CONFIG, notifier, at, lambda: 55.0)
    assert seen == [expected_ids()]
    assert set(sns_calls.calls) == {"Publish"} and tick.delivery.sent == 8


class SilentSns:
    """A socket that accepts and reads every request and answers nothing for 30 s."""

    def __init__(self) -> None:
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.requests = 0
        self._stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.getsockname()[1]}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.requests += 1
            threading.Thread(target=self._hold, args=(conn,), daemon=True).start()

    def _hold(self, conn: socket.socket) -> None:
        conn.recv(65536)
        self._stop.wait(30)
        conn.close()

    def close(self) -> None:
        self._stop.set()
        self.server.close()


def test_a_hanging_sns_costs_the_tick_seconds_not_the_budgets_evaluation() -> None:
    """(b) In real time: five alerts wait from a previous minute, every Publish hangs
    for 30 s, and the tick has its deployed timeout. Every budget's evaluation of the
    minute is recorded, and the run ends well inside the timeout."""
    silent = SilentSns()
    try:
        sns = boto3.client(
            "sns",
            region_name=REGION,
            endpoint_url=silent.url,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            config=client_config("sns"),
        )
        topic = f"arn:aws:sns:{REGION}:{ACCOUNT}:finance"
        notifier = SnsNotifier(sns, {"finance": topic, "team": topic, "admin": topic})
        ledger = running_jobs()
        from shared.adapters.notify import Alert

        outbox = OutboxStore(ledger.table)
        for n in range(5):
            outbox.record(Alert("team", "idle", f"idle {n}", "m", alert_id=f"idle:{n}"), T0)
        at = T0 + timedelta(hours=1)
        ledger.clock.advance_to(at)
        done: list[Any] = []
        started = time.monotonic()

        def tick() -> None:
            done.append(
                run_tick(
                    ledger.deps,
                    ledger.budgets,
                    CONFIG,
                    notifier,
                    at,
                    lambda: TICK_TIMEOUT - (time.monotonic() - started),
                )
            )

        worker = threading.Thread(target=tick, daemon=True)
        worker.start()
        worker.join(TICK_TIMEOUT)
        elapsed = time.monotonic() - started
        assert done, f"the tick did not end within its {TICK_TIMEOUT} s timeout"
        assert elapsed < TICK_TIMEOUT
        assert budget_alert_ids(ledger) == expected_ids()  # every budget evaluated
        (result,) = done
        assert sorted(result.alerts) == sorted(f"{job}:{t}" for job in JOBS for t in (50, 100))
        assert result.delivery.sent == 0 and silent.requests >= 1
        # One publish was tried (two attempts, each cut by the read timeout), then the
        # run stopped: SNS is not answering. Its retry time is set.
        first = outbox.get("idle:0")
        assert first is not None and first["state"] == "pending" and first.get("retry_at")
        assert elapsed < limits.PUBLISH_WORST_SECONDS + 5
    finally:
        silent.close()


class Brownout:
    """Every Publish times out while ``down``; a before-send hook (botocore retries it)."""

    def __init__(self) -> None:
        self.down = True
        self.refused = 0

    def __call__(self, request: Any, **kwargs: Any) -> AWSResponse | None:
        if not self.down:
            return None
        from botocore.exceptions import ReadTimeoutError

        self.refused += 1
        raise ReadTimeoutError(endpoint_url=request.url)


def tick_until_delivered(ledger: Ledger, notifier: SnsNotifier, start: datetime) -> int:
    """Ticks a minute apart until nothing is pending; the number of ticks."""
    at = start
    for n in range(1, 40):
        ledger.clock.advance_to(at)
        result = run_tick(ledger.deps, ledger.budgets, CONFIG, notifier, at, lambda: 55.0)
        if result.delivery.next_due is None:
            return n
        at += timedelta(minutes=1)
    raise AssertionError("still pending after 40 ticks")


def test_once_sns_answers_every_pending_alert_is_delivered_exactly_once(
    aws: dict[str, Any],
) -> None:
    """(c) Three minutes of brown-out, then SNS answers: every alert, once."""
    ledger = running_jobs()
    notifier = SnsNotifier(aws["sns"], aws["topics"])
    brownout = Brownout()
    aws["sns"].meta.events.register_first("before-send.sns.Publish", brownout)
    at = T0 + timedelta(hours=1)
    for minute in range(3):
        ledger.clock.advance_to(at + timedelta(minutes=minute))
        run_tick(
            ledger.deps,
            ledger.budgets,
            CONFIG,
            notifier,
            at + timedelta(minutes=minute),
            lambda: 55.0,
        )
    assert brownout.refused > 0 and received(aws, "finance") == []
    assert budget_alert_ids(ledger) == expected_ids()
    brownout.down = False
    tick_until_delivered(ledger, notifier, at + timedelta(minutes=3))
    got = Counter(alert_id(m) for m in received(aws, "finance"))
    assert got == Counter(dict.fromkeys(expected_ids(), 1))
    aws["sns"].meta.events.unregister("before-send.sns.Publish", brownout)


class RefuseOne:
    """SNS refuses every Publish of one budget's messages as invalid (for good)."""

    def __init__(self, budget_id: str) -> None:
        self.marker = f"Subject=Budget+{budget_id}+at"  # form-encoded
        self.refused = 0

    def __call__(self, request: Any, **kwargs: Any) -> AWSResponse | None:
        body = request.body.decode() if isinstance(request.body, bytes) else str(request.body)
        if self.marker not in body:
            return None
        from botocore.exceptions import ClientError

        self.refused += 1  # raised before moto's own hook can publish it
        error = {"Code": "InvalidParameter", "Message": "Invalid parameter: injected"}
        raise ClientError({"Error": error}, "Publish")


def test_an_alert_refused_for_good_ends_failed_and_admins_are_told(
    aws: dict[str, Any],
) -> None:
    """(d) One budget's alerts are refused as invalid on every attempt."""
    ledger = running_jobs()
    notifier = SnsNotifier(aws["sns"], aws["topics"])
    refuse = RefuseOne("beta")
    aws["sns"].meta.events.register_first("before-send.sns.Publish", refuse)
    try:
        tick_until_delivered(ledger, notifier, T0 + timedelta(hours=1))
    finally:
        aws["sns"].meta.events.unregister("before-send.sns.Publish", refuse)
    outbox = OutboxStore(ledger.table)
    refused_ids = {"budget:beta:total:50", "budget:beta:total:100"}
    for refused in refused_ids:
        item = outbox.get(refused)
        assert item is not None and item["state"] == "failed", item
        assert int(item["attempts"]) == limits.REFUSALS_FOR_GOOD
    assert refuse.refused == limits.REFUSALS_FOR_GOOD * len(refused_ids)
    finance = Counter(alert_id(m) for m in received(aws, "finance"))
    assert finance == Counter(dict.fromkeys(expected_ids() - refused_ids, 1))
    admin = received(aws, "admin")
    assert sorted(alert_id(m) for m in admin) == sorted(f"delivery_failed:{i}" for i in refused_ids)
    for message in admin:
        assert message["MessageAttributes"]["kind"]["Value"] == "delivery_failed"
        named = alert_id(message).removeprefix("delivery_failed:")
        assert f"alert_id: {named}" in message["Message"]
        assert "InvalidParameter" in message["Message"]
