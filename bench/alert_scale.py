"""``python -m bench.alert_scale [--jobs 10,1000,10000] [--instances 5000]``: the budget
tick at organisation scale (issue 27) and the largest item of each record kind.

For each job count: that many one-instance jobs in one project, three budgets (the
project for the month, the account in total, one job), and a budget tick an hour later
(evaluation into the outbox, then delivery to a recording notifier): its wall time, its
DynamoDB calls (in total and per budget), and the largest alert body. Then a day of
``--instances`` untagged instances: the daily summary stored and its message. The
in-memory table counts calls as DynamoDB would be called (one Query of the rollups
index is one call per 1 MB page in DynamoDB: about one per 1,000 rollups).

Targets (checked, printed as ok/FAIL): every message under SNS's limit less the
attribute room, every item under ``limits.ITEM_BYTES``, and the tick's calls per budget
at the largest job count within one Query page per 1,000 jobs of the smallest's.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import UTC, datetime, timedelta
from typing import Any

ACCOUNT, REGION = "123456789012", "us-east-1"
T0 = datetime(2026, 11, 1, tzinfo=UTC)
BUDGETS = [
    {
        "budget_id": "project-month",
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
        "budget_id": "one-job",
        "scope": {"job": "job-00007"},
        "amount_usd": "10",
        "period": "total",
        "thresholds": [100],
    },
]


def _config() -> Any:
    from shared.config.ledger import LedgerConfig

    return LedgerConfig.model_validate(
        {
            "live_prices": False,
            "prices": {"ec2": {"trn1.32xlarge": "21.50"}},
            "budgets": BUDGETS,
        }
    )


class _Recording:
    def __init__(self) -> None:
        self.sent: list[Any] = []

    def send(self, alert: Any) -> None:
        self.sent.append(alert)


def _ledger(count: int, tags: Any) -> tuple[Any, Any]:
    """(deps, table): ``count`` running one-instance jobs, 20 started each second."""
    from bench.twins import memory_deps
    from shared.domain.instance import InstanceProfile
    from shared.services.instances import record_state_change

    profiles = [
        InstanceProfile(
            instance_id=f"i-{n:017x}",
            instance_type="trn1.32xlarge",
            region=REGION,
            account=ACCOUNT,
            tags=tags(n),
        )
        for n in range(count)
    ]
    deps = memory_deps(_config(), {p.instance_id: p for p in profiles}, T0)
    table, clock = deps.table, deps.clock
    for n, p in enumerate(profiles):
        at = T0 + timedelta(seconds=n // 20)
        clock.advance_to(at)
        record_state_change(
            deps,
            event_id=f"run-{n}",
            at=at,
            instance_id=p.instance_id,
            state="running",
            region=REGION,
            account=ACCOUNT,
        )
    return deps, table


def _message_bytes(alert: Any) -> int:
    from shared.adapters.notify import clean_subject, message_attributes

    attributes = sum(
        len(name) + len(a["DataType"]) + len(a["StringValue"].encode())
        for name, a in message_attributes(alert).items()
    )
    return len(alert.message.encode()) + attributes + len(clean_subject(alert.subject))


def _largest_by_kind(table: Any, into: dict[str, tuple[int, str]]) -> None:
    from bench.records import stored_size

    for (pk, sk), item in table.items.items():
        kind = str(item.get("kind") or pk.split("#")[0])
        size = stored_size(item)
        if size > into.get(kind, (0, ""))[0]:
            into[kind] = (size, f"{pk} {sk}")


def budget_tick(jobs: int, kinds: dict[str, tuple[int, str]]) -> dict[str, Any]:
    from shared.adapters.budget_store import BudgetStore
    from shared.services.budget_tick import run_tick

    deps, table = _ledger(jobs, lambda n: {"training-job": f"job-{n:05d}", "project": "llama"})
    at = T0 + timedelta(hours=1)
    deps.clock.advance_to(at)
    notifier = _Recording()
    before = dict(table.calls)
    started = time.perf_counter()
    tick = run_tick(deps, BudgetStore(table), deps.config, notifier, at, lambda: 55.0)
    seconds = time.perf_counter() - started
    calls = {k: v - before.get(k, 0) for k, v in table.calls.items() if v - before.get(k, 0)}
    _largest_by_kind(table, kinds)
    return {
        "jobs": jobs,
        "tick_seconds": round(seconds, 3),
        "dynamodb_calls": calls,
        "calls_per_budget": round(sum(calls.values()) / len(BUDGETS), 2),
        "alerts": len(tick.alerts),
        "delivered": tick.delivery.sent,
        "largest_message_bytes": max((_message_bytes(a) for a in notifier.sent), default=0),
    }


def summary_day(instances: int, kinds: dict[str, tuple[int, str]]) -> dict[str, Any]:
    from shared.adapters.daily_store import SummaryStore
    from shared.adapters.outbox import OutboxStore
    from shared.services.alerts import AlertPoster
    from shared.services.summaries import publish_summary, summarize_day

    deps, table = _ledger(instances, lambda n: {})
    now = T0 + timedelta(days=1, minutes=15)
    deps.clock.advance_to(now)
    started = time.perf_counter()
    summary, rows = summarize_day(deps, T0.date(), now)
    SummaryStore(table).put_summary(T0.date(), summary)
    notifier = _Recording()

    class _Nowhere:
        def put(self, key: str, body: str | bytes, content_type: str) -> None:
            pass

    poster = AlertPoster(OutboxStore(table), notifier)
    publish_summary(summary, rows, _Nowhere(), poster, "1.2", now)
    seconds = time.perf_counter() - started
    _largest_by_kind(table, kinds)
    return {
        "instances": instances,
        "summary_seconds": round(seconds, 3),
        "focus_rows": len(rows),
        "summary_json_bytes": len(json.dumps(summary)),
        "message_bytes": max((_message_bytes(a) for a in notifier.sent), default=0),
    }


def main(argv: list[str] | None = None) -> int:
    from shared.domain import limits

    parser = argparse.ArgumentParser(prog="python -m bench.alert_scale", description=__doc__)
    parser.add_argument("--jobs", default="10,1000,10000")
    parser.add_argument("--instances", type=int, default=5000)
    args = parser.parse_args(argv)
    kinds: dict[str, tuple[int, str]] = {}
    ticks = [budget_tick(int(n), kinds) for n in args.jobs.split(",")]
    day = summary_day(args.instances, kinds)
    room = limits.SNS_MESSAGE_BYTES - limits.ATTRIBUTE_ROOM_BYTES
    print(f"{'jobs':>7} {'tick s':>8} {'calls':>6} {'/budget':>8} {'largest msg B':>14}")
    for t in ticks:
        total = sum(t["dynamodb_calls"].values())
        print(
            f"{t['jobs']:>7} {t['tick_seconds']:>8} {total:>6} {t['calls_per_budget']:>8} "
            f"{t['largest_message_bytes']:>14}"
        )
    print(
        f"day of {day['instances']} untagged instances: {day['summary_seconds']} s, "
        f"summary JSON {day['summary_json_bytes']} B, message {day['message_bytes']} B"
    )
    print("largest item of each record kind (DynamoDB item-size rules):")
    for kind, (size, key) in sorted(kinds.items()):
        print(f"  {kind:<22} {size:>7} B  {key}")
    smallest, largest = ticks[0], ticks[-1]
    pages = max(largest["jobs"] // 1000, 1)
    checks = {
        "every message under SNS's limit less the attribute room": all(
            t["largest_message_bytes"] <= room for t in ticks
        )
        and day["message_bytes"] <= room,
        f"every item under {limits.ITEM_BYTES} B": all(
            s < limits.ITEM_BYTES for s, _ in kinds.values()
        ),
        "calls per budget within one page per 1,000 jobs": largest["calls_per_budget"]
        <= smallest["calls_per_budget"] + pages,
    }
    for name, ok in checks.items():
        print(f"{'ok  ' if ok else 'FAIL'} {name}")
    print(json.dumps({"ticks": ticks, "day": day, "largest_items": kinds}, default=str))
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
