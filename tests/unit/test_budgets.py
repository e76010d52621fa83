"""Budget rules with in-memory twins: periods reset at UTC boundaries, once per period."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from pydantic import ValidationError

from costtracker.fakes.twins import RecordingNotifier
from shared.adapters.outbox import OutboxStore
from shared.config.budgets import Budget
from shared.config.ledger import LedgerConfig
from shared.domain.budgets import period_bounds
from shared.domain.instance import InstanceProfile
from shared.services.alerts import AlertPoster
from shared.services.budget_anomalies import check_anomalies
from shared.services.budget_tick import run_tick
from shared.services.instances import record_state_change
from tests.support import ACCOUNT, REGION, Ledger, memory_ledger

IID = "i-0000000000000bbbb"
BIG = InstanceProfile(
    instance_id="i-0000000000000cccc",
    instance_type="p5.48xlarge",
    region=REGION,
    tags={"training-job": "big"},
)
START = datetime(2026, 10, 31, 20, tzinfo=UTC)


def ledger_with(budgets: list[dict]) -> Ledger:  # type: ignore[type-arg]
    profile = InstanceProfile(
        instance_id=IID,
        instance_type="trn1.32xlarge",
        region=REGION,
        tags={"training-job": "sft", "team": "nlp", "project": "llama"},
    )
    config = LedgerConfig.model_validate(
        {
            "live_prices": False,
            "prices": {"ec2": {"trn1.32xlarge": "10", "p5.48xlarge": "100"}},
            "budgets": budgets,
        }
    )
    ledger = memory_ledger(profile, BIG, config=config, now=START)
    record_state_change(
        ledger.deps,
        event_id="run",
        at=START,
        instance_id=IID,
        state="running",
        region=REGION,
        account=ACCOUNT,
    )
    return ledger


def evaluate(ledger: Ledger, notifier: RecordingNotifier, at: datetime) -> list[str]:
    ledger.clock.advance_to(at)
    return run_tick(
        ledger.deps, ledger.budgets, ledger.deps.config, notifier, at, lambda: 55.0
    ).alerts


def run_ticks(ledger: Ledger, until: datetime) -> list[tuple[str, str, str]]:
    notifier = RecordingNotifier()
    at = START
    while at <= until:  # no day-boundary work any more: the rollups know active days
        evaluate(ledger, notifier, at)
        at += timedelta(minutes=10)
    return [(a.kind, a.attributes.get("threshold", ""), a.at) for a in notifier.sent]


def test_daily_budget_resets_at_utc_midnight_and_alerts_again() -> None:
    # $10/h, $20 a day: 100 % after 2 h of the day.
    ledger = ledger_with(
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
    alerts = [a for a in run_ticks(ledger, START + timedelta(hours=8)) if a[0] == "budget"]
    assert alerts == [
        ("budget", "100", "2026-10-31T22:00:00Z"),
        ("budget", "100", "2026-11-01T02:00:00Z"),
    ]


def test_monthly_budget_resets_at_the_month_boundary() -> None:
    ledger = ledger_with(
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
    alerts = [a for a in run_ticks(ledger, START + timedelta(hours=6)) if a[0] == "budget"]
    # October: 1.5 h -> $15 at 21:30; November starts at 0: $15 at 01:30.
    assert alerts == [
        ("budget", "50", "2026-10-31T21:30:00Z"),
        ("budget", "50", "2026-11-01T01:30:00Z"),
    ]


def test_each_threshold_alerts_once_per_period_even_when_evaluated_twice() -> None:
    ledger = ledger_with([{"budget_id": "b", "scope": {"job": "sft"}, "amount_usd": "10"}])
    notifier = RecordingNotifier()
    later = START + timedelta(hours=3)
    evaluate(ledger, notifier, later)
    evaluate(ledger, notifier, later)  # a concurrent run
    kinds = sorted((a.kind, a.attributes.get("threshold")) for a in notifier.sent)
    assert kinds == [("budget", "100"), ("budget", "50"), ("budget", "80")]


def test_a_tag_scope_does_not_count_other_jobs() -> None:
    ledger = ledger_with(
        [{"budget_id": "nlp", "scope": {"tag": {"team": "nlp"}}, "amount_usd": "1000"}]
    )
    record_state_change(
        ledger.deps,
        event_id="big",
        at=START,
        instance_id=BIG.instance_id,
        state="running",
        region=REGION,
        account=ACCOUNT,
    )
    from shared.services.budgets import JobCache, budget_status

    now = START + timedelta(hours=2)
    (budget,) = ledger.deps.config.budgets
    status = budget_status(ledger.deps, ledger.deps.config, budget, now, JobCache(ledger.deps))
    assert status.spend_by_job == {"sft": Decimal(20)}  # big ($100/h) has no team tag
    assert status.burn_per_hour == Decimal(10)


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


@pytest.mark.parametrize(
    "delay",
    [timedelta(0), timedelta(minutes=1)],
    ids=["at-midnight", "a-minute-later"],
)
def test_anomaly_needs_history_and_a_spike(delay: timedelta) -> None:
    ledger = ledger_with([{"budget_id": "acct", "scope": {"account": True}, "amount_usd": "1e6"}])
    notifier = RecordingNotifier()
    for day in range(1, 8):
        midnight = datetime(2026, 11, day, tzinfo=UTC)
        ledger.clock.advance_to(midnight)
        if day == 6:  # a big job runs through Nov 6
            record_state_change(
                ledger.deps,
                event_id="big",
                at=midnight,
                instance_id=BIG.instance_id,
                state="running",
                region=REGION,
                account=ACCOUNT,
            )
        if day == 7:
            record_state_change(
                ledger.deps,
                event_id="big-stop",
                at=midnight,
                instance_id=BIG.instance_id,
                state="stopped",
                region=REGION,
                account=ACCOUNT,
            )
        ledger.clock.advance_to(midnight + delay)
        sent = check_anomalies(ledger.deps, ledger.budgets, ledger.deps.config, midnight + delay)
        AlertPoster(OutboxStore(ledger.deps.table), notifier).deliver_pending(
            midnight + delay, lambda: 55.0
        )
        # Nov 1..5: a flat $240 a day, no anomaly; Nov 6: $240 + $2,400.
        assert sent == (["acct:anomaly"] if day == 7 else []), day
    (alert,) = notifier.sent
    assert alert.kind == "anomaly" and "$2,640.00 on 2026-11-06" in alert.subject


def test_spend_of_a_job_whose_last_event_is_now() -> None:
    """Spend at a moment is the sum of job totals accrued to it (cost rule 9), also when
    an event is timed exactly at that moment."""
    from shared.services.budgets import JobCache

    ledger = ledger_with([])
    stop = START + timedelta(hours=1)
    ledger.clock.advance_to(stop)
    record_state_change(
        ledger.deps,
        event_id="stop",
        at=stop,
        instance_id=IID,
        state="stopped",
        region=REGION,
        account=ACCOUNT,
    )
    cache = JobCache(ledger.deps)
    later = stop + timedelta(minutes=1)
    assert cache.spend_at("sft", stop, later) == Decimal(10)
    assert cache.spend_at("sft", START + timedelta(minutes=30), later) == Decimal(5)


def test_a_warm_tick_reuses_a_jobs_spend_at_the_period_start_until_its_past_changes() -> None:
    """The day's spend needs each active job's spend at midnight: read from the job's
    records once per container, then kept, until a late event (or a price filled in
    later) changes the job's past; then read again, and right."""
    from shared.adapters.rollup_store import RollupStore
    from shared.services.budgets import JobCache

    ledger = ledger_with([])
    midnight = datetime(2026, 11, 1, tzinfo=UTC)
    now = midnight + timedelta(hours=2)  # $10/h since 20:00: $40 by midnight
    ledger.clock.advance_to(now)
    record_state_change(
        ledger.deps,
        event_id="stop",
        at=midnight + timedelta(hours=1),
        instance_id=IID,
        state="stopped",
        region=REGION,
        account=ACCOUNT,
    )
    queries = lambda: ledger.table.calls.get("query", 0)  # noqa: E731

    before = queries()
    assert JobCache(ledger.deps).spend_at("sft", midnight, now) == Decimal(40)
    first = queries() - before
    before = queries()
    assert JobCache(ledger.deps).spend_at("sft", midnight, now) == Decimal(40)
    assert first >= 2 and queries() - before == 1  # the rollups only

    # A second instance of the job ran 22:00-23:00 yesterday; its events arrive now.
    other = InstanceProfile(
        instance_id="i-0000000000000dddd",
        instance_type="trn1.32xlarge",
        region=REGION,
        tags={"training-job": "sft"},
    )
    ledger.deps.inventory.profiles[other.instance_id] = other  # type: ignore[attr-defined]
    for event_id, at, state in (
        ("late-run", midnight - timedelta(hours=2), "running"),
        ("late-stop", midnight - timedelta(hours=1), "stopped"),
    ):
        record_state_change(
            ledger.deps,
            event_id=event_id,
            at=at,
            instance_id=other.instance_id,
            state=state,
            region=REGION,
            account=ACCOUNT,
        )
    warm = JobCache(ledger.deps).spend_at("sft", midnight, now)
    cold_deps = ledger.deps.__class__(
        **{**ledger.deps.__dict__, "rollups": RollupStore(ledger.table)}
    )
    assert warm == JobCache(cold_deps).spend_at("sft", midnight, now) == Decimal(50)
