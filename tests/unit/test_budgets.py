"""Budget rules with in-memory twins: periods reset at UTC boundaries, once per period."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from pydantic import ValidationError

from shared.budgets import Budget, period_bounds
from shared.clock import FixedClock
from shared.config import LedgerConfig, PriceOverrides
from shared.models import InstanceProfile
from shared.pricing import PriceBook, bundled_snapshot
from shared.services.budgets import check_anomalies, evaluate_budgets
from shared.services.day_boundary import mark_running_jobs_active
from shared.services.instance_state import LedgerDeps, record_state_change
from tests.fakes import FakeInventory, InMemoryLedger, RecordingNotifier

IID = "i-0000000000000bbbb"
START = datetime(2026, 10, 31, 20, tzinfo=UTC)


def deps_with(budgets: list[dict]) -> LedgerDeps:  # type: ignore[type-arg]
    profile = InstanceProfile(
        instance_id=IID,
        instance_type="trn1.32xlarge",
        region="us-east-1",
        tags={"training-job": "sft", "team": "nlp", "project": "llama"},
    )
    config = LedgerConfig.model_validate(
        {
            "live_prices": False,
            "prices": PriceOverrides(ec2={"trn1.32xlarge": Decimal(10)}).model_dump(),
            "budgets": budgets,
        }
    )
    ledger = InMemoryLedger()
    deps = LedgerDeps(
        ledger=ledger,
        inventory=FakeInventory(profile),
        prices=PriceBook(config, ledger, None, bundled_snapshot(), START.date()),
        clock=FixedClock(START),
        config=config,
    )
    record_state_change(
        deps, event_id="run", at=START, instance_id=IID, state="running", region="us-east-1"
    )
    return deps


def run_ticks(deps: LedgerDeps, until: datetime) -> list[tuple[str, str, str]]:
    notifier = RecordingNotifier()
    at = START
    while at <= until:
        if at.hour == 0 and at.minute == 0:  # the day-boundary schedule
            mark_running_jobs_active(deps.ledger, at.date(), ("team", "project"))
        evaluate_budgets(deps.ledger, deps.config, notifier, at)
        at += timedelta(minutes=10)
    return [(a.kind, a.attributes.get("threshold", ""), a.attributes["at"]) for a in notifier.sent]


def test_daily_budget_resets_at_utc_midnight_and_alerts_again() -> None:
    # $10/h, $20 a day: 100 % after 2 h of the day.
    deps = deps_with(
        [
            {
                "budget_id": "nlp-daily",
                "scope": {"tag": {"team": "nlp"}},
                "amount_usd": "20",
                "period": "day",
                "thresholds": [100],
            }
        ]
    )
    alerts = [a for a in run_ticks(deps, START + timedelta(hours=8)) if a[0] == "budget"]
    assert alerts == [
        ("budget", "100", "2026-10-31T22:00:00Z"),
        ("budget", "100", "2026-11-01T02:00:00Z"),
    ]


def test_monthly_budget_resets_at_the_month_boundary() -> None:
    deps = deps_with(
        [
            {
                "budget_id": "llama-month",
                "scope": {"tag": {"project": "llama"}},
                "amount_usd": "30",
                "period": "month",
                "thresholds": [50],
            }
        ]
    )
    alerts = [a for a in run_ticks(deps, START + timedelta(hours=6)) if a[0] == "budget"]
    # October: 1.5 h -> $15 at 21:30; November starts at 0: $15 at 01:30.
    assert alerts == [
        ("budget", "50", "2026-10-31T21:30:00Z"),
        ("budget", "50", "2026-11-01T01:30:00Z"),
    ]


def test_each_threshold_alerts_once_per_period_even_when_evaluated_twice() -> None:
    deps = deps_with([{"budget_id": "b", "scope": {"job": "sft"}, "amount_usd": "10"}])
    notifier = RecordingNotifier()
    later = START + timedelta(hours=3)
    evaluate_budgets(deps.ledger, deps.config, notifier, later)
    evaluate_budgets(deps.ledger, deps.config, notifier, later)  # a concurrent run
    kinds = sorted((a.kind, a.attributes.get("threshold")) for a in notifier.sent)
    assert kinds == [("budget", "100"), ("budget", "50"), ("budget", "80")]


def test_period_bounds() -> None:
    budget = Budget.model_validate(
        {"budget_id": "m", "scope": {"account": True}, "amount_usd": "1", "period": "month"}
    )
    start, end, key = period_bounds(budget, datetime(2026, 12, 31, 23, tzinfo=UTC))
    assert (start.day, end.year if end else None, key) == (1, 2027, "2026-12")


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"scope": {"account": True}, "amount_usd": "0"}, "amount_usd"),
        ({"scope": {"account": True}, "amount_usd": "5", "thresholds": [0]}, "thresholds"),
        ({"scope": {"account": True}, "amount_usd": "5", "thresholds": [1001]}, "thresholds"),
        ({"scope": {}, "amount_usd": "5"}, "scope"),
        ({"scope": {"job": "a", "account": True}, "amount_usd": "5"}, "scope"),
        ({"scope": {"account": True}, "amount_usd": "5", "period": "week"}, "period"),
        ({"scope": {"account": True}, "amount_usd": "5", "recipients": ["nope"]}, "recipients"),
    ],
)
def test_bad_budgets_are_rejected_naming_the_field(raw: dict, field: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ValidationError) as info:
        Budget.model_validate({"budget_id": "x", **raw})
    assert field in str(info.value)


def test_unknown_tag_key_in_a_scope_is_rejected() -> None:
    with pytest.raises(ValidationError, match=r"scope\.tag\.colour"):
        LedgerConfig.model_validate(
            {
                "budgets": [
                    {"budget_id": "x", "scope": {"tag": {"colour": "red"}}, "amount_usd": "5"}
                ]
            }
        )


def test_anomaly_needs_history_and_a_spike() -> None:
    deps = deps_with([{"budget_id": "acct", "scope": {"account": True}, "amount_usd": "1e6"}])
    big = InstanceProfile(
        instance_id="i-0000000000000cccc",
        instance_type="p5.48xlarge",
        region="us-east-1",
        tags={"training-job": "big"},
    )
    deps.inventory.profiles[big.instance_id] = big  # type: ignore[attr-defined]
    deps.config = deps.config.model_copy(
        update={
            "prices": PriceOverrides(
                ec2={"trn1.32xlarge": Decimal(10), "p5.48xlarge": Decimal(100)}
            )
        }
    )
    deps.prices = PriceBook(deps.config, deps.ledger, None, bundled_snapshot(), START.date())
    notifier = RecordingNotifier()
    for day in range(1, 8):
        midnight = datetime(2026, 11, day, tzinfo=UTC)
        mark_running_jobs_active(deps.ledger, midnight.date(), ())
        if day == 6:  # a big job runs through Nov 6
            record_state_change(
                deps,
                event_id="big",
                at=midnight,
                instance_id=big.instance_id,
                state="running",
                region="us-east-1",
            )
        if day == 7:
            record_state_change(
                deps,
                event_id="big-stop",
                at=midnight,
                instance_id=big.instance_id,
                state="stopped",
                region="us-east-1",
            )
        sent = check_anomalies(deps.ledger, deps.config, notifier, midnight)
        # Nov 1..5: a flat $240 a day, no anomaly; Nov 6: $240 + $2,400.
        assert sent == (["acct:anomaly"] if day == 7 else []), day
    (alert,) = notifier.sent
    assert alert.kind == "anomaly" and "$2,640.00 on 2026-11-06" in alert.subject
