"""The organisation's sweep on moto: the planner queues one unit per account x region,
the worker runs each (one DescribeInstances page) and queues the next page; a failing
account or region is retried and reported and never stops the others."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError
from botocore.exceptions import ClientError
from moto import mock_aws

from costtracker.lambda_context import FakeLambdaContext
from shared.adapters.account_store import AccountStore
from shared.adapters.accounts import AccountClients, boto3_client
from shared.app import runtime
from shared.config.ledger import LedgerConfig
from shared.domain.clock import FixedClock
from shared.services.account_trust import UntrustedAccount
from tests.aws_events import ec2_state_event, scheduled_event
from tests.support import moto_instance, moto_ledger

TABLE = "ledger-org-sweep"
HOME, MEMBER_A, MEMBER_B = "123456789012", "222222222222", "333333333333"
REGIONS = ("us-east-1", "eu-west-1")


def _launch(ec2: Any, count: int, tags: dict[str, str]) -> list[str]:
    """``count`` instances, one reservation each (moto pages DescribeInstances by
    reservation)."""
    return [moto_instance(ec2, "trn1.32xlarge", tags) for _ in range(count)]


def _config(**accounts: Any) -> str:
    return LedgerConfig.model_validate(
        {
            "live_prices": False,
            "prices": {"ec2": {"trn1.32xlarge": "21.50"}},
            "accounts": {
                "allowed_accounts": [MEMBER_A, MEMBER_B],
                "regions": list(REGIONS),
                "sweep_page_size": 5,
                **accounts,
            },
        }
    ).model_dump_json()


@pytest.fixture
def org(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    with mock_aws():
        boto3.setup_default_session()  # hooks registered below die with this session
        moto_ledger(monkeypatch, TABLE, _config())
        queue_url = boto3.client("sqs", region_name="us-east-1").create_queue(QueueName="units")[
            "QueueUrl"
        ]
        factory = AccountClients(
            lambda s, r, c: boto3_client(s, r, c),
            home_account=HOME,
            role_name="costtracker-member-read",
            default_region="us-east-1",
        )
        launched = {
            # 7 running instances: two pages of five in us-east-1.
            (MEMBER_A, "us-east-1"): _launch(
                factory.client_for("ec2", MEMBER_A, "us-east-1"), 7, {"training-job": "a-run"}
            ),
            (MEMBER_A, "eu-west-1"): _launch(
                factory.client_for("ec2", MEMBER_A, "eu-west-1"), 2, {"training-job": "a-eu"}
            ),
            (MEMBER_B, "us-east-1"): _launch(
                factory.client_for("ec2", MEMBER_B, "us-east-1"),
                3,
                {"training-job": "b-run", "team": "nlp"},
            ),
        }
        monkeypatch.setenv("TRACKER_ACCOUNT", HOME)
        monkeypatch.setenv("SWEEP_QUEUE_URL", queue_url)
        clock = FixedClock(datetime.now(UTC))
        with runtime.override(clock):
            yield {"queue_url": queue_url, "launched": launched, "clock": clock}
        boto3.setup_default_session()


def _tick() -> dict[str, Any]:
    from functions.ledger_sweep.handler import handler

    event = scheduled_event("sweep-1", datetime.now(UTC), source="aws.scheduler", account=HOME)
    return dict(handler(event, FakeLambdaContext("ledger_sweep")))


def _drain(queue_url: str, max_receives: int = 3) -> dict[str, Any]:
    """Deliver the queue to the worker until it is empty, as the event source mapping
    does: a failed unit comes back (here at once) until ``max_receives``, then it is set
    aside (the dead-letter queue)."""
    from functions.sweep_worker.handler import handler

    sqs = boto3.client("sqs", region_name="us-east-1")
    receives: dict[str, int] = {}
    done: list[dict[str, Any]] = []
    dead: list[dict[str, Any]] = []
    while True:
        messages = sqs.receive_message(
            QueueUrl=queue_url, MaxNumberOfMessages=1, VisibilityTimeout=0
        ).get("Messages", [])
        if not messages:
            return {"done": done, "dead": dead, "receives": receives}
        message = messages[0]
        unit = json.loads(message["Body"])
        receives[message["MessageId"]] = receives.get(message["MessageId"], 0) + 1
        record = {
            "messageId": message["MessageId"],
            "receiptHandle": message["ReceiptHandle"],
            "body": message["Body"],
            "attributes": {"ApproximateReceiveCount": str(receives[message["MessageId"]])},
            "messageAttributes": {},
            "md5OfBody": message["MD5OfBody"],
            "eventSource": "aws:sqs",
            "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:units",
            "awsRegion": "us-east-1",
        }
        try:
            answer = handler({"Records": [record]}, FakeLambdaContext("sweep_worker"))
            failed = bool(answer["batchItemFailures"])
        except BatchProcessingError:  # every record of the batch failed: Lambda retries it
            failed = True
        if not failed:
            done.append(unit)
        elif receives[message["MessageId"]] < max_receives:
            continue  # visible again: delivered again
        else:
            dead.append(unit)
        sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])


def _opened(account: str, instance_ids: list[str]) -> list[str]:
    instances = runtime.ledger_deps().instances
    return [i for i in instance_ids if instances.pointer(account, i) is not None]


def test_the_planner_queues_one_unit_per_account_and_region_and_pages_follow(
    org: dict[str, Any],
) -> None:
    planned = _tick()
    assert planned == {"accounts": 3, "regions": 2, "units": 6}
    drained = _drain(org["queue_url"])
    assert drained["dead"] == []
    pages = sorted((u["account"], u["region"], u["page"]) for u in drained["done"])
    # Seven instances in pages of five: a second unit for that account and region only.
    assert (MEMBER_A, "us-east-1", 2) in pages and len(pages) == 7
    second = [u for u in drained["done"] if u["page"] == 2]
    assert second[0]["next_token"]
    for (account, _region), instance_ids in org["launched"].items():
        assert _opened(account, instance_ids) == instance_ids
    health = {h.account: h for h in AccountStore(runtime.current().table).health()}
    assert set(health[MEMBER_A].swept) == set(REGIONS)
    assert health[MEMBER_A].role_assumable is True
    assert health[MEMBER_A].alarms == {"us-east-1": 0, "eu-west-1": 0}
    # Run again: every unit is idempotent (deterministic inferred event ids).
    _tick()
    again = _drain(org["queue_url"])
    assert len(again["done"]) == 7 and again["dead"] == []


def test_one_account_whose_role_cannot_be_assumed_never_stops_the_others(
    org: dict[str, Any],
) -> None:
    def deny_b(params: dict[str, Any], **_: Any) -> None:
        if MEMBER_B in params.get("RoleArn", "") and "member" in params["RoleArn"]:
            raise ClientError(
                {"Error": {"Code": "AccessDenied", "Message": "not authorized"}}, "AssumeRole"
            )

    boto3.DEFAULT_SESSION.events.register("before-parameter-build.sts.AssumeRole", deny_b)  # type: ignore[union-attr]
    _tick()
    drained = _drain(org["queue_url"])
    dead = sorted((u["account"], u["region"]) for u in drained["dead"])
    assert dead == [(MEMBER_B, "eu-west-1"), (MEMBER_B, "us-east-1")]
    # Each of B's units was tried three times (the queue's receive count), then set aside.
    assert sorted(drained["receives"].values()).count(3) == 2
    for (account, _region), instance_ids in org["launched"].items():
        expected = [] if account == MEMBER_B else instance_ids
        assert _opened(account, instance_ids) == expected
    health = {h.account: h for h in AccountStore(runtime.current().table).health()}
    assert health[MEMBER_B].role_assumable is False
    assert health[MEMBER_B].last_error is not None and "AccessDenied" in health[MEMBER_B].last_error
    assert health[MEMBER_B].swept == {}
    assert health[MEMBER_A].last_error is None and set(health[MEMBER_A].swept) == set(REGIONS)


def test_a_disabled_region_fails_its_units_only(org: dict[str, Any]) -> None:
    def region_off(context: dict[str, Any], **_: Any) -> None:
        if context.get("client_region") == "eu-west-1":
            raise ClientError(
                {"Error": {"Code": "OptInRequired", "Message": "region not enabled"}},
                "DescribeInstances",
            )

    boto3.DEFAULT_SESSION.events.register(
        "before-parameter-build.ec2.DescribeInstances", region_off
    )  # type: ignore[union-attr]
    _tick()
    drained = _drain(org["queue_url"])
    assert sorted(u["account"] for u in drained["dead"]) == [HOME, MEMBER_A, MEMBER_B]
    assert {u["region"] for u in drained["dead"]} == {"eu-west-1"}
    assert (
        _opened(MEMBER_A, org["launched"][(MEMBER_A, "us-east-1")])
        == org["launched"][(MEMBER_A, "us-east-1")]
    )
    health = {h.account: h for h in AccountStore(runtime.current().table).health()}
    assert "OptInRequired" in (health[MEMBER_A].last_error or "")
    assert set(health[MEMBER_A].swept) == {"us-east-1"}


def test_a_team_limited_to_other_accounts_is_not_booked_from_this_one(
    org: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEDGER_CONFIG", _config(team_accounts={"nlp": [MEMBER_A]}))
    with runtime.override(org["clock"]):
        _tick()
        drained = _drain(org["queue_url"])
        assert drained["dead"] == []
        b_ids = org["launched"][(MEMBER_B, "us-east-1")]
        assert _opened(MEMBER_B, b_ids) == []
        a_ids = org["launched"][(MEMBER_A, "eu-west-1")]
        assert _opened(MEMBER_A, a_ids) == a_ids
        # The event path too: B's state change of an nlp instance is refused (to the DLQ).
        from functions.instance_state.handler import handler

        event = ec2_state_event(
            "b-running", b_ids[0], "running", datetime.now(UTC), account=MEMBER_B
        )
        with pytest.raises(UntrustedAccount, match="team 'nlp'"):
            handler(event, FakeLambdaContext("instance_state"))
        assert _opened(MEMBER_B, b_ids) == []
