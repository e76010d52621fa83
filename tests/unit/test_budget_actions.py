"""Budget actions' pure parts and adapters: the rule's validation, stable ids, when a
waiting stop is due, the deny policy IAM gets, the timer's delay, and the stopper's
training-job stops (re-read first, opted-in and in progress only)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.stub import Stubber
from pydantic import ValidationError

from shared.adapters.action_store import ActionRecord, ActionStore
from shared.adapters.crossing_timers import delay_seconds
from shared.adapters.launch_denial import (
    IamLaunchDenial,
    PrincipalAtQuota,
    deny_document,
    policy_name,
)
from shared.adapters.table import MemoryTable
from shared.adapters.training_job_stops import TrainingJobNow
from shared.config.budgets import Budget
from shared.config.ledger import CheckpointConfig, LedgerConfig
from shared.domain.budget_actions import (
    BudgetAction,
    action_id,
    job_of_checkpoint_prefix,
    stop_due,
)
from shared.events.timers import TimerEvent
from shared.services.action_deps import ActionDeps
from shared.services.budget_actions import checkpoints_tracked
from shared.services.crossing_timers import wake_waiting_stops
from shared.services.launch_denials import deny_tags, scope_accounts
from shared.services.stopper import Stopper, StopRequest

T0 = datetime(2026, 11, 1, 4, 39, 5, tzinfo=UTC)
OPT_IN = "costtracker:auto-stop"


def test_an_action_is_a_dry_run_unless_it_says_otherwise() -> None:
    action = BudgetAction.model_validate({"at": 100, "do": "stop_now"})
    assert action.dry_run is True
    budget = Budget.model_validate(
        {
            "budget_id": "nlp-day",
            "scope": {"tag": {"team": "nlp"}},
            "amount_usd": "500",
            "period": "day",
            "actions": [{"at": 80, "do": "notify"}, {"at": 100, "do": "deny_launch"}],
        }
    )
    assert [a.do for a in budget.actions] == ["notify", "deny_launch"]


@pytest.mark.parametrize(
    ("rule", "names"),
    [
        ({"at": 100, "do": "stop_now", "grace_minutes": 5}, "grace_minutes applies"),
        ({"at": 0, "do": "notify"}, "at"),
        ({"at": 100, "do": "terminate"}, "do"),
        ({"at": 100, "do": "stop_after_checkpoint", "grace_minutes": -1}, "grace_minutes"),
        ({"at": 100, "do": "stop_now", "colour": "red"}, "colour"),
    ],
)
def test_a_bad_rule_is_refused_naming_what_is_wrong(rule: dict[str, object], names: str) -> None:
    with pytest.raises(ValidationError, match=names):
        BudgetAction.model_validate(rule)


def test_the_action_id_is_a_function_of_what_it_is_about() -> None:
    action = BudgetAction(at=100, do="stop_after_checkpoint", dry_run=False)
    same = BudgetAction(at=100, do="stop_after_checkpoint", grace_minutes=30)
    assert action_id("cap", "2026-11", action) == "cap:2026-11:100:stop_after_checkpoint"
    assert action_id("cap", "2026-11", action) == action_id("cap", "2026-11", same)
    assert action_id("cap", "2026-12", action) != action_id("cap", "2026-11", action)


def test_a_waiting_stop_is_due_at_a_checkpoint_after_the_crossing_or_at_the_grace_end() -> None:
    wait = BudgetAction(at=100, do="stop_after_checkpoint", grace_minutes=30)
    before, after = T0 - timedelta(minutes=5), T0 + timedelta(minutes=20)
    assert not stop_due(wait, T0, None, T0 + timedelta(minutes=29))
    assert not stop_due(wait, T0, before, T0 + timedelta(minutes=10))  # an older checkpoint
    assert stop_due(wait, T0, after, T0 + timedelta(minutes=20))
    assert stop_due(wait, T0, None, T0 + timedelta(minutes=30))
    assert stop_due(BudgetAction(at=100, do="stop_now"), T0, None, T0)
    default = BudgetAction(at=100, do="stop_after_checkpoint")
    assert not stop_due(default, T0, None, T0 + timedelta(minutes=59))
    assert stop_due(default, T0, None, T0 + timedelta(minutes=60))


def test_the_deny_covers_launching_and_tagging_into_the_scope() -> None:
    document = deny_document({"team": "nlp", "project": "llama"})
    conditions = {"StringEquals": {"aws:RequestTag/project": "llama", "aws:RequestTag/team": "nlp"}}
    assert [(s["Effect"], s["Action"], s["Condition"]) for s in document["Statement"]] == [
        ("Deny", ["ec2:RunInstances", "sagemaker:CreateTrainingJob"], conditions),
        ("Deny", ["ec2:CreateTags"], conditions),
    ]
    assert policy_name("cap:2026-11:100:deny_launch") == "deny-launch-cap-2026-11-100-deny_launch"
    assert len(policy_name("x" * 300)) == 128


def test_a_principal_at_its_quota_is_reported_and_other_paths_are_refused() -> None:
    iam = boto3.client(
        "iam", region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="b"
    )
    denial = IamLaunchDenial(iam)
    arn = "arn:aws:iam::123456789012:policy/costtracker/deny-launch-x"
    with Stubber(iam) as stub:
        stub.add_client_error("attach_role_policy", "LimitExceeded", "Cannot exceed quota")
        with pytest.raises(PrincipalAtQuota, match="role/ml-nlp"):
            denial.attach(arn, "arn:aws:iam::123456789012:role/ml-nlp")
    with pytest.raises(ValueError, match="/costtracker/"):
        denial.attach("arn:aws:iam::aws:policy/AdministratorAccess", "arn:aws:iam::1:role/r")
    with pytest.raises(ValueError, match="not an IAM role"):
        denial.attach(arn, "arn:aws:iam::123456789012:instance-profile/p")
    # A policy is attached only in its own account: a member's principal gets its own.
    with pytest.raises(ValueError, match="not in the account of"):
        denial.attach(arn, "arn:aws:iam::222222222222:role/ml-nlp")


def test_a_timer_waits_whole_seconds_rounded_up_within_sqs_bounds() -> None:
    now = datetime(2026, 11, 1, 4, 30, tzinfo=UTC)
    assert delay_seconds(now + timedelta(seconds=544.186), now) == 545
    assert delay_seconds(now - timedelta(seconds=3), now) == 0
    assert delay_seconds(now + timedelta(hours=1), now) == 900


def test_a_timer_event_names_each_budget_once_with_its_earliest_moment() -> None:
    body = {"budget_id": "cap", "threshold": 100, "moment": "2026-11-01T04:39:04.186+00:00"}
    later = {**body, "moment": "2026-11-01T04:40:00+00:00"}
    event = TimerEvent.model_validate(
        {
            "Records": [
                {"messageId": "m1", "body": json.dumps(later)},
                {"messageId": "m2", "body": json.dumps(body)},
            ]
        }
    )
    assert event.budgets() == [("cap", datetime(2026, 11, 1, 4, 39, 4, 186000, tzinfo=UTC))]
    with pytest.raises(ValidationError):
        TimerEvent.model_validate({"Records": [{"messageId": "m", "body": "{}"}]})


def test_sagemaker_checkpoints_are_tracked_in_a_tracked_bucket_under_the_key_pattern() -> None:
    checkpoint = CheckpointConfig(buckets=("ckpt-bucket",))  # ^runs/(?P<job>[^/]+)/step-N/
    assert checkpoints_tracked("s3://ckpt-bucket/runs/llama-sm/", checkpoint, "llama-sm")
    assert checkpoints_tracked("s3://ckpt-bucket/runs/llama-sm", checkpoint, "llama-sm")
    assert not checkpoints_tracked("s3://other/runs/llama-sm/", checkpoint, "llama-sm")
    # The right bucket but a prefix the pattern does not see, or naming another job.
    assert not checkpoints_tracked("s3://ckpt-bucket/scratch/llama-sm/", checkpoint, "llama-sm")
    assert not checkpoints_tracked("s3://ckpt-bucket/runs/other-job/", checkpoint, "llama-sm")
    assert not checkpoints_tracked("s3://ckpt-bucket/runs/", checkpoint, "llama-sm")
    assert not checkpoints_tracked("s3://ckpt-bucket/", checkpoint, "llama-sm")
    assert not checkpoints_tracked("", checkpoint, "llama-sm")
    # The job's name must end in the prefix, not be cut short by it.
    assert job_of_checkpoint_prefix(checkpoint.key_pattern, "runs/lla") == "lla"
    assert job_of_checkpoint_prefix(r"^ckpt/(?P<job>[a-z]+)-(?P<step>\d+)/", "ckpt/lla") is None
    # Groups, classes and escapes before the job's are kept whole.
    pattern = r"^(?:teams|groups)/[^/)]+/(?P<job>[^/]+)/(?P<step>\d+)/"
    assert job_of_checkpoint_prefix(pattern, "teams/nlp/llama-sm/") == "llama-sm"
    assert job_of_checkpoint_prefix(pattern, "people/nlp/llama-sm/") is None


class SageMakerNow:
    def __init__(self, jobs: dict[str, TrainingJobNow | None], refuse: str = "") -> None:
        self.jobs, self.refuse, self.stopped = jobs, refuse, []

    def current(self, name: str, region: str, account: str = "") -> TrainingJobNow | None:
        return self.jobs[name]

    def stop(self, name: str, region: str, account: str = "") -> None:
        if name == self.refuse:
            raise ClientError({"Error": {"Code": "ValidationException"}}, "StopTrainingJob")
        self.stopped.append(name)


class NoEc2:
    def current(self, instance_id: str, region: str, account: str = "") -> None:
        raise AssertionError("no instance here")

    def stop(self, instance_id: str, region: str, account: str = "") -> None:
        raise AssertionError("no instance here")


def test_a_training_job_is_stopped_only_in_progress_and_opted_in() -> None:
    sagemaker = SageMakerNow(
        {
            "a": TrainingJobNow("InProgress", {OPT_IN: "true"}),
            "b": TrainingJobNow("InProgress", {}),
            "c": TrainingJobNow("Completed", {OPT_IN: "true"}),
            "d": None,
            "e": TrainingJobNow("InProgress", {OPT_IN: "true"}),
        },
        refuse="e",
    )
    stopper = Stopper(NoEc2(), OPT_IN, sagemaker)
    results = [
        stopper.stop_training_job(StopRequest(name, "us-east-1", "123456789012")).result
        for name in "abcde"
    ]
    assert results == ["stopped", "opted_out", "not_running", "not_running", "stop_failed"]
    assert sagemaker.stopped == ["a"]
    assert Stopper(NoEc2(), OPT_IN).stop_training_job(StopRequest("a", "x")).result == "stop_failed"


def test_an_account_wide_budget_cannot_deny_launches() -> None:
    with pytest.raises(ValidationError, match="deny_launch needs a tag or job scope"):
        Budget.model_validate(
            {
                "budget_id": "all",
                "scope": {"account": True},
                "amount_usd": "100",
                "actions": [{"at": 100, "do": "deny_launch"}],
            }
        )


def test_an_scp_deny_needs_an_organisation_and_an_unknown_setting_stops() -> None:
    with pytest.raises(ValidationError, match="deny_with 'scp' needs accounts"):
        LedgerConfig.model_validate({"budget_actions": {"enabled": True, "deny_with": "scp"}})
    with pytest.raises(ValidationError, match="deny_with"):
        LedgerConfig.model_validate({"budget_actions": {"deny_with": "ou"}})
    scp = LedgerConfig.model_validate(
        {
            "budget_actions": {"enabled": True, "deny_with": "scp"},
            "accounts": {"organization_id": "o-abcdef1234"},
        }
    )
    assert scp.budget_actions.deny_with == "scp"
    assert LedgerConfig().budget_actions.deny_with == "iam"


class PlannedTimers:
    def __init__(self) -> None:
        self.planned: list[tuple[str, int, datetime, datetime]] = []

    def plan(self, budget_id: str, threshold: int, moment: datetime, now: datetime) -> None:
        self.planned.append((budget_id, threshold, moment, now))


def test_a_complete_checkpoint_wakes_each_stop_waiting_for_its_job_once() -> None:
    store, timers = ActionStore(MemoryTable()), PlannedTimers()
    acts = ActionDeps(store=store, stopper=None, denial=None, timers=timers)
    fired = datetime(2026, 11, 1, 4, 39, 5, tzinfo=UTC)
    checkpoint = datetime(2026, 11, 1, 4, 59, 5, tzinfo=UTC)
    for budget, state in (("cap", "waiting_for_checkpoint"), ("done-cap", "done")):
        record = ActionRecord(
            f"{budget}:total:100:stop_after_checkpoint",
            budget,
            "total",
            "stop_after_checkpoint",
            100,
            False,
            state,
            fired,
        )
        assert store.create(record)
        store.mark_waiting("llama", record, fired + timedelta(hours=1))
    assert wake_waiting_stops(acts, "other-job", checkpoint, checkpoint) == 0
    # Delivered twice (or seen by two containers): one timer, at the checkpoint's moment.
    assert wake_waiting_stops(acts, "llama", checkpoint, checkpoint) == 1
    assert wake_waiting_stops(acts, "llama", checkpoint, checkpoint + timedelta(seconds=3)) == 0
    assert timers.planned == [("cap", 100, checkpoint, checkpoint)]
    # Beyond the timers' 15 minutes (a long quiet period) the minute tick acts instead.
    later = checkpoint + timedelta(minutes=16)
    assert wake_waiting_stops(acts, "llama", later, checkpoint) == 0


class RefusingOnce(PlannedTimers):
    """SQS refuses the first send (throttled, a brown-out), then accepts."""

    def __init__(self) -> None:
        super().__init__()
        self.refused = 0

    def plan(self, budget_id: str, threshold: int, moment: datetime, now: datetime) -> None:
        if not self.refused:
            self.refused += 1
            raise ClientError({"Error": {"Code": "Throttling", "Message": "slow"}}, "SendMessage")
        super().plan(budget_id, threshold, moment, now)


def test_a_timer_that_could_not_be_sent_is_sent_by_the_next_delivery() -> None:
    """Claimed only once sent: a refused send neither fails the checkpoint event nor
    keeps the next delivery (or tick) from sending it."""
    store, timers = ActionStore(MemoryTable()), RefusingOnce()
    acts = ActionDeps(store=store, stopper=None, denial=None, timers=timers)
    fired = datetime(2026, 11, 1, 4, 39, 5, tzinfo=UTC)
    checkpoint = datetime(2026, 11, 1, 4, 59, 5, tzinfo=UTC)
    record = ActionRecord(
        "cap:total:100:stop_after_checkpoint", "cap", "total", "stop_after_checkpoint",
        100, False, "waiting_for_checkpoint", fired,
    )  # fmt: skip
    assert store.create(record)
    store.mark_waiting("llama", record, fired + timedelta(hours=1))
    assert wake_waiting_stops(acts, "llama", checkpoint, checkpoint) == 0  # refused, logged
    assert wake_waiting_stops(acts, "llama", checkpoint, checkpoint) == 1
    assert wake_waiting_stops(acts, "llama", checkpoint, checkpoint) == 0  # sent and claimed
    assert timers.planned == [("cap", 100, checkpoint, checkpoint)]


def test_the_scopes_accounts_are_its_teams_when_the_team_is_mapped() -> None:
    config = LedgerConfig.model_validate(
        {"accounts": {"team_accounts": {"nlp": ["111122223333", "444455556666"]}}}
    )

    def budget(tag: dict[str, str]) -> Budget:
        return Budget.model_validate({"budget_id": "b", "scope": {"tag": tag}, "amount_usd": "1"})

    assert scope_accounts(budget({"team": "nlp"}), config) == ("111122223333", "444455556666")
    assert scope_accounts(budget({"team": "vision"}), config) is None  # not limited
    assert scope_accounts(budget({"project": "llama"}), config) is None
    assert deny_tags(budget({"team": "nlp"}), config) == {"team": "nlp"}


@pytest.mark.parametrize(
    ("tracked", "due_at_crossing"), [("false", True), ("true", False), ("unknown", False)]
)
def test_a_training_job_not_described_waits_like_a_tracked_one(
    monkeypatch: pytest.MonkeyPatch, tracked: str, due_at_crossing: bool
) -> None:
    """Only a job known to keep its checkpoints elsewhere is stopped at the crossing; one
    whose DescribeTrainingJob failed waits for a checkpoint, at most its grace."""
    import shared.services.budget_actions as service
    from shared.adapters.action_store import ActionTarget
    from shared.config.budget_actions import BudgetAction

    monkeypatch.setattr(service, "last_complete_checkpoint_at", lambda deps, job, now: None)
    action = BudgetAction(at=100, do="stop_after_checkpoint", grace_minutes=30)
    fired = datetime(2026, 11, 1, 4, 0, tzinfo=UTC)
    target = ActionTarget("training_job", "sft", "123456789012", "us-east-1", "llama")
    target.extra["tracked"] = tracked
    assert service._due(None, action, fired, target, fired) is due_at_crossing  # type: ignore[arg-type]
    assert service._due(None, action, fired, target, fired + timedelta(minutes=30))  # type: ignore[arg-type]


def test_deny_names_of_a_long_budget_id_stay_apart() -> None:
    """IAM and Organizations names stop at 128 characters: a long budget id would cut off
    the period and threshold, so two actions would share one policy; a digest keeps
    them apart, and short names are unchanged."""
    from shared.adapters.launch_denial import policy_name
    from shared.adapters.scp_denial import scp_name

    long_id = "b" * 120
    at_90, at_100 = f"{long_id}:2026-11:90:deny_launch", f"{long_id}:2026-11:100:deny_launch"
    for name_of in (policy_name, scp_name):
        assert name_of(at_90) != name_of(at_100)
        assert len(name_of(at_90)) <= 128 and name_of(at_90) == name_of(at_90)
    assert policy_name("cap:total:100:deny_launch") == "deny-launch-cap-total-100-deny_launch"
