"""The function catalog (shared.app.functions): one entry per handler, the triggers the
stack deploys and the replay routes by, and grants that follow the configuration."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from costtracker.routing import matches
from shared.app.function_grants import Feature
from shared.app.functions import BY_NAME, FUNCTIONS, checkpoint_rule, event_rules, schedules
from shared.app.triggers import Every
from shared.config.ledger import LedgerConfig
from tests.aws_events import ec2_state_event, s3_object_event

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_every_handler_has_one_catalog_entry_and_every_entry_a_handler() -> None:
    handlers = {path.parent.name for path in (REPO_ROOT / "functions").glob("*/handler.py")}
    names = [function.name for function in FUNCTIONS]
    assert len(names) == len(set(names)) == len(BY_NAME)
    assert set(names) == handlers
    for function in FUNCTIONS:
        assert function.handler_module == f"functions.{function.name}.handler"


def test_only_the_api_and_the_queue_consumers_are_invoked_synchronously() -> None:
    """The timer's and the sweep's queues hold their messages (and their dead letters),
    not Lambda's retries."""
    assert [f.name for f in FUNCTIONS if not f.asynchronous] == [
        f.name for f in FUNCTIONS if f.name in ("sweep_worker", "budget_timer", "job_cost_api")
    ]


def test_event_rules_in_delivery_order_and_checkpoints_narrowed_to_buckets() -> None:
    rules = event_rules()
    assert list(rules) == [
        "instance_state",
        "spot_interruption",
        "alarm_lifecycle",
        "alarm_state",
        "training_job_state",
        "capacity_block",
        "checkpoint",
        "fsx_event",
    ]
    assert "detail" not in rules["checkpoint"]
    narrowed = checkpoint_rule(("ckpt-a", "ckpt-b"))
    assert narrowed["detail"] == {"bucket": {"name": ["ckpt-a", "ckpt-b"]}}
    assert "detail" not in event_rules()["checkpoint"]  # the catalog itself is unchanged


def test_a_running_state_change_routes_to_the_ledger_then_the_alarms() -> None:
    event = ec2_state_event("e1", "i-1", "running", "2026-11-01T00:00:00Z")
    routed = [name for name, pattern in event_rules().items() if matches(pattern, event)]
    assert routed == ["instance_state", "alarm_lifecycle"]
    pending = {**event, "detail": {"instance-id": "i-1", "state": "pending"}}
    assert [n for n, p in event_rules().items() if matches(p, pending)] == ["instance_state"]
    s3 = s3_object_event("s1", "x", "k", "2026-11-01T00:00:00Z", size=1)
    assert not matches(checkpoint_rule(("ckpt-a",)), s3)
    assert matches(checkpoint_rule(()), s3)


def test_schedules_follow_the_catalog_and_the_summary_time() -> None:
    scheduled = [f.name for f in FUNCTIONS if isinstance(f.trigger, Every)]
    by_function = {s.function: s for s in schedules("07:45")}
    assert list(by_function) == scheduled
    assert by_function["daily_summary"].offset == timedelta(hours=7, minutes=45)
    assert by_function["daily_summary"].cron() == {"minute": "45", "hour": "7"}
    assert by_function["budget_tick"].cron() == {"minute": "*", "hour": "*"}
    assert by_function["price_backfill"].cron() == {"minute": "5", "hour": "*"}
    assert [s.function for s in by_function.values() if not s.in_replay] == ["ledger_sweep"]


def test_schedule_times() -> None:
    (backfill,) = [s for s in schedules() if s.function == "price_backfill"]  # hourly at :05
    at = datetime(2026, 3, 1, 10, 5, tzinfo=UTC)
    assert backfill.next_after(at) == datetime(2026, 3, 1, 11, 5, tzinfo=UTC)
    assert backfill.next_after(at - timedelta(seconds=1)) == at
    assert backfill.count_between(at - timedelta(seconds=1), at + timedelta(hours=3)) == 4
    assert backfill.count_between(at, at) == 0


@pytest.mark.parametrize(
    ("update", "feature", "granted"),
    [
        ({"auto_stop": {"enabled": True}}, Feature.AUTO_STOP, {"alarm_state", "alarm_sweep"}),
        ({"reconcile": {"enabled": True}}, Feature.RECONCILE, {"reconcile"}),
        (
            {"accounts": {"organization_id": "o-abcdef1234"}},
            Feature.ORGANIZATION,
            {"instance_state", "spot_interruption", "alarm_lifecycle", "alarm_state"}
            # Measured utilization is read in each instance's own account (rule 10).
            | {"ledger_sweep", "sweep_worker", "metric_read", "daily_summary", "fsx_refresh"}
            # The event edge's trust check: the account list and health records.
            | {"training_job_state", "capacity_block", "checkpoint", "fsx_event"}
            # Alarms deleted and reservations refreshed in their own account too.
            | {"alarm_sweep", "reservation_refresh"}
            # A budget action stops an instance in its own account.
            | {"budget_tick", "budget_timer"},
        ),
        (
            {"budget_actions": {"enabled": True}},
            Feature.BUDGET_ACTIONS,
            {"budget_tick", "budget_timer", "job_cost_api"},
        ),
    ],
)
def test_feature_grants_only_while_the_feature_is_on(
    update: dict[str, object], feature: Feature, granted: set[str]
) -> None:
    off, on = LedgerConfig(), LedgerConfig.model_validate(update)
    changed = {f.name for f in FUNCTIONS if f.grants_for(on) != f.grants_for(off)}
    assert changed == granted
    for function in FUNCTIONS:
        assert function.grants_for(off) == function.grants
        # The event edge's trust grants come with every event function, not as a feature
        # grant of its own.
        edge = function.event_path and feature is Feature.ORGANIZATION
        has_feature_grant = feature in dict(function.feature_grants)
        assert has_feature_grant or edge or function.name not in granted
        assert not has_feature_grant or function.name in granted
    assert BY_NAME["alarm_state"].grants_for(off).stops_instances is False
