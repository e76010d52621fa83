"""Bounded at organisation scale (issue 27): 10,000 jobs in one budget's scope and 5,000
untagged instances in one day, driven through the real services and stores (the
in-memory table, which counts its calls) and moto's SNS (the real SnsNotifier).

Every message stays under SNS's limit (body, subject and attributes), every item of
every record kind under ``limits.ITEM_BYTES`` (the ledger's indexes project ALL, so an
index entry is its item's size), every budget is evaluated at each tick, and the
DynamoDB calls per budget per tick do not grow with the jobs in scope beyond one Query
page per 1,000. The bounds are read from ``shared.domain.limits``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from shared.adapters import ledger_schema
from shared.adapters.daily_store import SummaryStore
from shared.adapters.items import dump
from shared.adapters.notify import Alert, SnsNotifier, clean_subject, message_attributes
from shared.adapters.outbox import OutboxStore
from shared.adapters.report_store import DirectoryReportStore
from shared.adapters.table import MemoryTable
from shared.config.ledger import LedgerConfig
from shared.domain import limits
from shared.domain.instance import InstanceProfile
from shared.services.alerts import AlertPoster
from shared.services.budget_tick import run_tick
from shared.services.instances import record_state_change
from shared.services.summaries import publish_summary, summarize_day
from tests.support import ACCOUNT, REGION, Ledger, memory_ledger

T0 = datetime(2026, 11, 1, tzinfo=UTC)
BUDGETS = [
    {
        "budget_id": "llama-month",
        "scope": {"tag": {"project": "llama"}},
        "amount_usd": "100000",
        "period": "month",
        "thresholds": [50, 80, 100],
    },
    {
        "budget_id": "account-total",
        "scope": {"account": True},
        "amount_usd": "150000",
        "period": "total",
        "thresholds": [50, 100],
    },
    {
        "budget_id": "one-sweep",
        "scope": {"job": "sweep-00007"},
        "amount_usd": "10",
        "period": "total",
        "thresholds": [100],
    },
]
CONFIG = LedgerConfig.model_validate(
    {
        "live_prices": False,
        "prices": {"ec2": {"trn1.32xlarge": "21.50"}, "ebs_gb_month": {"gp3": "0.08"}},
        "budgets": BUDGETS,
    }
)


def profile(n: int, tags: dict[str, str]) -> InstanceProfile:
    return InstanceProfile(
        instance_id=f"i-{n:017x}",
        instance_type="trn1.32xlarge",
        region=REGION,
        account=ACCOUNT,
        tags=tags,
    )


def sweep(jobs: int) -> Ledger:
    """``jobs`` one-instance jobs of project llama, 20 started each second from T0."""
    profiles = [
        profile(n, {"training-job": f"sweep-{n:05d}", "project": "llama"}) for n in range(jobs)
    ]
    ledger = memory_ledger(*profiles, config=CONFIG, now=T0)
    for n, p in enumerate(profiles):
        at = T0 + timedelta(seconds=n // 20)
        ledger.clock.advance_to(at)
        record_state_change(
            ledger.deps,
            event_id=f"run-{n}",
            at=at,
            instance_id=p.instance_id,
            state="running",
            region=REGION,
            account=ACCOUNT,
        )
    return ledger


@pytest.fixture(scope="module")
def sns() -> Iterator[tuple[Any, dict[str, str]]]:
    with mock_aws():
        client = boto3.client("sns", region_name=REGION)
        topics = {
            audience: client.create_topic(Name=f"scale-{audience}")["TopicArn"]
            for audience in ("finance", "team", "admin")
        }
        yield client, topics


class CountingNotifier(SnsNotifier):
    """The real notifier over moto, keeping what it published."""

    def __init__(self, client: Any, topics: dict[str, str]) -> None:
        super().__init__(client, topics)
        self.sent: list[Alert] = []

    def send(self, alert: Alert) -> None:
        super().send(alert)
        self.sent.append(alert)


def message_bytes(alert: Alert) -> int:
    """What SNS counts against its limit: the body and every message attribute's name,
    type and value (the subject is at most 100 characters, counted too)."""
    attributes = sum(
        len(name.encode()) + len(a["DataType"].encode()) + len(a["StringValue"].encode())
        for name, a in message_attributes(alert).items()
    )
    return len(alert.message.encode()) + attributes + len(clean_subject(alert.subject))


@dataclass
class Tick:
    alerts: list[str]
    calls: int
    seconds: float


def tick(ledger: Ledger, notifier: SnsNotifier, at: datetime) -> Tick:
    import time

    table = ledger.table
    ledger.clock.advance_to(at)
    before = sum(table.calls.values())
    started = time.monotonic()
    result = run_tick(ledger.deps, ledger.budgets, CONFIG, notifier, at, lambda: 55.0)
    assert not result.failed_budgets
    return Tick(result.alerts, sum(table.calls.values()) - before, time.monotonic() - started)


def largest_by_kind(table: MemoryTable) -> dict[str, tuple[int, str]]:
    """Each record kind's largest item (bytes as stored, its key)."""
    largest: dict[str, tuple[int, str]] = {}
    for (pk, sk), item in table.items.items():
        kind = str(item.get("kind") or pk.split("#")[0])
        size = len(dump(item).encode())
        if size > largest.get(kind, (0, ""))[0]:
            largest[kind] = (size, f"{pk} {sk}")
    return largest


@pytest.fixture(scope="module")
def big_budget(sns: tuple[Any, dict[str, str]]) -> dict[str, Any]:
    """10,000 jobs in the llama and account budgets' scopes, two ticks, and the same
    ticks over 10 jobs for comparison."""
    client, topics = sns
    small, big = sweep(10), sweep(10_000)
    out: dict[str, Any] = {"ledger": big}
    for name, ledger in (("small", small), ("big", big)):
        notifier = CountingNotifier(client, topics)
        first = tick(ledger, notifier, T0 + timedelta(hours=1))
        second = tick(ledger, notifier, T0 + timedelta(hours=1, minutes=1))
        out[name] = {"ticks": [first, second], "sent": notifier.sent}
    return out


def test_every_budget_is_evaluated_and_alerts_at_10000_jobs(big_budget: dict[str, Any]) -> None:
    # 10,000 x $21.50/h for about an hour: ~$200k in scope; one sweep job ~$21.
    first, second = big_budget["big"]["ticks"]
    assert sorted(first.alerts) == sorted(
        [
            "llama-month:50",
            "llama-month:80",
            "llama-month:100",
            "account-total:50",
            "account-total:100",
            "one-sweep:100",
        ]
    )
    assert second.alerts == []  # evaluated again; nothing new to say
    sent = big_budget["big"]["sent"]
    assert {a.alert_id for a in sent} >= {
        "budget:llama-month:2026-11:100",
        "budget:account-total:total:100",
    }


def test_every_message_fits_snss_limit_and_names_the_rest(big_budget: dict[str, Any]) -> None:
    sent: list[Alert] = big_budget["big"]["sent"]
    assert sent
    room = limits.SNS_MESSAGE_BYTES - limits.ATTRIBUTE_ROOM_BYTES
    for alert in sent:
        assert message_bytes(alert) <= room, alert.alert_id
    llama = next(a for a in sent if a.alert_id == "budget:llama-month:2026-11:100")
    body = llama.message.splitlines()
    spend = body[body.index("Spend by job:") + 1 :]
    projected = body[: body.index("Spend by job:")]
    assert len([x for x in spend if x.startswith("  sweep-")]) == limits.TOP_ITEMS
    assert len([x for x in projected if x.startswith("  sweep-")]) == limits.TOP_ITEMS
    assert any(x.startswith("  and 9980 more, $") for x in spend)
    assert any(x.startswith("  and 9980 more running jobs") for x in projected)
    assert "GET /budgets/llama-month" in llama.message


def test_dynamodb_calls_per_budget_per_tick_do_not_grow_with_the_jobs(
    big_budget: dict[str, Any],
) -> None:
    pages = 10_000 // 1_000  # one Query page per 1,000 jobs is the allowance
    for n in (0, 1):
        small = big_budget["small"]["ticks"][n].calls
        big = big_budget["big"]["ticks"][n].calls
        assert big <= small + pages * len(BUDGETS), (n, small, big)


def test_every_item_of_every_kind_stays_under_the_item_bound(
    big_budget: dict[str, Any], big_day: dict[str, Any]
) -> None:
    for index in ledger_schema.create_table_request("t")["GlobalSecondaryIndexes"]:
        assert index["Projection"] == {"ProjectionType": "ALL"}  # an entry = its item
    kinds: dict[str, tuple[int, str]] = {}
    for table in (big_budget["ledger"].table, big_day["ledger"].table):
        for kind, found in largest_by_kind(table).items():
            kinds[kind] = max(kinds.get(kind, (0, "")), found)
    assert {"alert", "summary", "summary_part"} <= set(kinds)
    for kind, (size, key) in kinds.items():
        assert size < limits.ITEM_BYTES, (kind, key, size)


# -- a day of 5,000 untagged instances ---------------------------------------------------


@pytest.fixture(scope="module")
def big_day(sns: tuple[Any, dict[str, str]], tmp_path_factory: Any) -> dict[str, Any]:
    client, topics = sns
    count = 5_000
    profiles = [profile(n, {}) for n in range(count)]
    ledger = memory_ledger(*profiles, config=CONFIG, now=T0)
    for n, p in enumerate(profiles):
        for state, at in (
            ("running", T0 + timedelta(seconds=n // 10)),
            ("stopped", T0 + timedelta(hours=1)),
        ):
            ledger.clock.advance_to(max(at, ledger.clock.now()))
            record_state_change(
                ledger.deps,
                event_id=f"{state}-{n}",
                at=at,
                instance_id=p.instance_id,
                state=state,
                region=REGION,
                account=ACCOUNT,
            )
    now = T0 + timedelta(days=1, minutes=15)
    ledger.clock.advance_to(now)
    summary, rows = summarize_day(ledger.deps, T0.date(), now)
    store = SummaryStore(ledger.table)
    store.put_summary(T0.date(), summary)
    notifier = CountingNotifier(client, topics)
    folder = tmp_path_factory.mktemp("reports")
    poster = AlertPoster(OutboxStore(ledger.table), notifier)
    objects = publish_summary(summary, rows, DirectoryReportStore(folder), poster, "1.2", now)
    return {
        "ledger": ledger,
        "summary": summary,
        "rows": rows,
        "stored": store.get_summaries([T0.date()]),
        "objects": objects,
        "folder": folder,
        "sent": notifier.sent,
    }


def test_a_day_of_5000_untagged_instances_is_summarised_exported_and_sent(
    big_day: dict[str, Any],
) -> None:
    summary = big_day["summary"]
    assert len(summary["untagged_instances"]) == 5_000
    assert Decimal(summary["untagged_usd"]) == Decimal(summary["total_usd"]) > 0
    # Stored in parts, read back whole.
    assert big_day["stored"][T0.date()] == json.loads(json.dumps(summary))
    folder: Path = big_day["folder"]
    for key in big_day["objects"]:
        assert (folder / key).stat().st_size > 0, key
    assert any(k.endswith(".parquet") for k in big_day["objects"])
    assert len(big_day["rows"]) >= 5_000
    (message,) = big_day["sent"]
    assert message.alert_id == "daily_summary:2026-11-01" and message.kind == "daily_summary"
    assert message_bytes(message) <= limits.SNS_MESSAGE_BYTES - limits.ATTRIBUTE_ROOM_BYTES
    assert f"and {5_000 - limits.TOP_ITEMS} more (GET /summaries/2026-11-01)" in message.message
    record = OutboxStore(big_day["ledger"].table).get("daily_summary:2026-11-01")
    assert record is not None and record["state"] == "sent"
