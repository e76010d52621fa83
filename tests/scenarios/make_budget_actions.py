"""Writes the budget-action scenarios (docs/cost-rules.md "Budgets: forecasts and actions") into
``tests/scenarios/budget_actions/`` (rerun to regenerate): the tests
(``tests/integration/test_replay_budget_actions.py``, with the hand calculations) and the
bench (``bench/budget_latency.py``) replay the same files.

One trn1.32xlarge at $21.50/h runs from 00:00; the budget is $100 (total, 100 %): the
spend reaches $100 at 100 / 21.50 h = 16,744.186 s, 04:39:04.186, a crossing the forecast
predicts (the instance keeps running at one rate).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from costtracker.fakes.scenario_events import (
    ACCOUNT,
    REGION,
    ec2_state_event,
    epoch_ms,
    instance_arn,
    s3_object_event,
    training_job_arn,
    training_job_event,
)

HERE = Path(__file__).parent / "budget_actions"

A, B = "i-0a1b2c3d4e5f60001", "i-0a1b2c3d4e5f60002"
OPT_IN = "costtracker:auto-stop"
JOB = "llama-sft"
T0 = "2026-11-01T00:00:00Z"


def state(eid: str, at: str, iid: str, st: str) -> dict[str, Any]:
    return ec2_state_event(eid, iid, st, at, resources=[instance_arn(iid)])


def s3_object(eid: str, at: str, key: str) -> dict[str, Any]:
    return s3_object_event(
        eid,
        "ckpt-bucket",
        key,
        at,
        request_id="R1",
        resources=["arn:aws:s3:::ckpt-bucket"],
        size=1000,
        etag="e0",
        sequencer="01",
    )


def instance(iid: str, job: str, opted_in: bool) -> dict[str, Any]:
    tags = {"training-job": job, "project": "llama", "team": "nlp"}
    if opted_in:
        tags[OPT_IN] = "true"
    return {"instance_id": iid, "instance_type": "trn1.32xlarge", "tags": tags}


def budget(*actions: dict[str, Any], amount: str = "100") -> dict[str, Any]:
    return {
        "budget_id": "llama-cap",
        "scope": {"tag": {"project": "llama"}},
        "amount_usd": amount,
        "period": "total",
        "thresholds": [100],
        "actions": list(actions),
    }


def base(events: list[dict[str, Any]], *actions: dict[str, Any]) -> dict[str, Any]:
    return {
        "region": REGION,
        "account": ACCOUNT,
        "prices": {"ec2": {"trn1.32xlarge": "21.50"}},
        "checkpoint": {"buckets": ["ckpt-bucket"], "completion_marker": "_COMPLETE"},
        "instances": [instance(A, JOB, opted_in=True)],
        "budgets": [budget(*actions)],
        "events": [state("a-run", T0, A, "running"), *events],
        "until": "2026-11-01T08:00:00Z",
    }


def checkpoint_after_crossing() -> dict[str, Any]:
    """A complete checkpoint (its step's _COMPLETE marker) at 04:59:05, 20 minutes after
    the crossing: stop_after_checkpoint stops the instance at that moment (the marker
    wakes the waiting stop), stopped at 05:00:05."""
    return base(
        [
            s3_object("ck-1", "2026-11-01T04:58:30Z", f"runs/{JOB}/step-300/model.pt"),
            s3_object("ck-2", "2026-11-01T04:59:05Z", f"runs/{JOB}/step-300/_COMPLETE"),
        ],
        {"at": 100, "do": "stop_after_checkpoint", "dry_run": False},
    )


def grace_without_checkpoint() -> dict[str, Any]:
    """No checkpoint at all; grace_minutes 30: stopped at the crossing + 30 min."""
    return base(
        [], {"at": 100, "do": "stop_after_checkpoint", "grace_minutes": 30, "dry_run": False}
    )


def default_dry_run() -> dict[str, Any]:
    """stop_now without dry_run: a dry run. The instance runs to its own stop at 06:00."""
    return base(
        [state("a-stop", "2026-11-01T06:00:00Z", A, "stopped")], {"at": 100, "do": "stop_now"}
    )


def opted_out_instance() -> dict[str, Any]:
    """A (opted in) and B (no opt-in tag) both in scope, both from 00:00: $43/h reaches
    $100 at 100 / 43 h = 8,372.093 s, 02:19:32.093. stop_now stops A only; B runs to 04:00."""
    scenario = base(
        [
            state("b-run", T0, B, "running"),
            state("b-stop", "2026-11-01T04:00:00Z", B, "stopped"),
        ],
        {"at": 100, "do": "stop_now", "dry_run": False},
    )
    scenario["instances"].append(instance(B, "llama-eval", opted_in=False))
    return scenario


def release_before_checkpoint() -> dict[str, Any]:
    """The checkpoint scenario, with finance releasing the action at 04:45:00 (after it
    fired, before the checkpoint) and a team member trying first at 04:44:00 (403)."""
    scenario = checkpoint_after_crossing()
    scenario["events"].append(state("a-stop", "2026-11-01T06:00:00Z", A, "stopped"))
    path = "/budgets/llama-cap/actions/llama-cap:total:100:stop_after_checkpoint/release"
    scenario["api_calls"] = [
        {"at": "2026-11-01T04:44:00Z", "as": "team:nlp", "method": "POST", "path": path},
        {"at": "2026-11-01T04:45:00Z", "as": "finance", "method": "POST", "path": path},
    ]
    return scenario


def _ms(at: str) -> str:
    return str(epoch_ms(at))


def sagemaker_event(eid: str, at: str, status: str, name: str = "llama-sm") -> dict[str, Any]:
    arn = training_job_arn(name)
    detail: dict[str, Any] = {
        "TrainingJobName": name,
        "TrainingJobArn": arn,
        "TrainingJobStatus": status,
        "SecondaryStatus": "Training" if status == "InProgress" else status,
        "AlgorithmSpecification": {"TrainingImage": "img", "TrainingInputMode": "File"},
        "RoleArn": f"arn:aws:iam::{ACCOUNT}:role/SMRole",
        "ResourceConfig": {
            "InstanceType": "ml.trn1.32xlarge",
            "InstanceCount": 1,
            "VolumeSizeInGB": 0,
        },
        "StoppingCondition": {"MaxRuntimeInSeconds": 86400},
        "EnableManagedSpotTraining": False,
        "CreationTime": _ms(T0),
        "TrainingStartTime": _ms(T0),
        "LastModifiedTime": _ms(at),
        "SecondaryStatusTransitions": [],
        "Tags": {"training-job": "llama-sm", "project": "llama", "team": "nlp", OPT_IN: "true"},
    }
    return training_job_event(eid, at, detail)


def sagemaker_job() -> dict[str, Any]:
    """One opted-in SageMaker job (ml.trn1.32xlarge at $25/h, from 00:00) whose checkpoints
    are not tracked, no instance: $100 at 4 h, 04:00:00. stop_after_checkpoint stops it at
    the crossing; Stopped 120 s later, billed to 04:02:00 (14,520 s)."""
    scenario = base([], {"at": 100, "do": "stop_after_checkpoint", "dry_run": False})
    scenario["instances"] = []
    scenario["events"] = [sagemaker_event("sm-1", T0, "InProgress")]
    scenario["prices"]["sagemaker"] = {"ml.trn1.32xlarge": "25.00"}
    scenario["training_jobs"] = [
        {
            "name": "llama-sm",
            "instance_type": "ml.trn1.32xlarge",
            "instance_count": 1,
            "training_seconds": 36000,
            "tags": copy.deepcopy(scenario["events"][0]["detail"]["Tags"]),
        }
    ]
    return scenario


ALL = {
    "checkpoint_after_crossing": checkpoint_after_crossing,
    "grace_without_checkpoint": grace_without_checkpoint,
    "default_dry_run": default_dry_run,
    "opted_out_instance": opted_out_instance,
    "release_before_checkpoint": release_before_checkpoint,
    "sagemaker_job": sagemaker_job,
}


def minimum_charge() -> dict[str, Any]:
    """A crossing no forecast can see: a 20 s run billed EC2's 60 s minimum ($0.358333)
    crosses a $0.30 budget at its stop (00:00:20); the minute tick alerts at 00:01:00."""
    scenario = base([state("a-stop", "2026-11-01T00:00:20Z", A, "stopped")])
    scenario["budgets"] = [{**budget(), "amount_usd": "0.30", "actions": []}]
    scenario["until"] = "2026-11-01T01:00:00Z"
    return scenario


# Budget scenarios without actions, for the alert latency bench.
LATENCY = {"minimum_charge": minimum_charge}


def owner_day_cap() -> dict[str, Any]:
    """A per-person dollar cap: owner=alice, $100 a day, stop_now. The instance (owner
    alice) runs from 00:00: the day's $100 is reached at 04:39:04.186, stopped 04:39:05."""
    scenario = base([], {"at": 100, "do": "stop_now", "dry_run": False})
    scenario["instances"][0]["tags"]["owner"] = "alice"
    scenario["budgets"] = [
        {
            "budget_id": "alice-day",
            "scope": {"tag": {"owner": "alice"}},
            "amount_usd": "100",
            "period": "day",
            "thresholds": [100],
            "actions": [{"at": 100, "do": "stop_now", "dry_run": False}],
        }
    ]
    return scenario


ALL["owner_day_cap"] = owner_day_cap


def forecast_moves_later() -> dict[str, Any]:
    """The crossing predicted for 04:39:04.186 gets its timer (planned by 04:25); the
    instance stops at 04:35:00 with $98.54 spent: the timer finds nothing crossed."""
    scenario = base([state("a-stop", "2026-11-01T04:35:00Z", A, "stopped")])
    scenario["budgets"][0]["actions"] = []
    return scenario


def forecast_moves_earlier() -> dict[str, Any]:
    """B (also $21.50/h) starts at 04:30:00 with $96.75 spent: the remaining $3.25 at
    $43/h takes 272.093 s: crossing 04:34:32.093, a new timer; the old one (04:39:05)
    finds the alert already recorded."""
    scenario = base([state("b-run", "2026-11-01T04:30:00Z", B, "running")])
    scenario["budgets"][0]["actions"] = []
    scenario["instances"].append(instance(B, "llama-eval", opted_in=False))
    return scenario


LATENCY["forecast_moves_later"] = forecast_moves_later
LATENCY["forecast_moves_earlier"] = forecast_moves_earlier


if __name__ == "__main__":
    HERE.mkdir(exist_ok=True)
    for name, build in {**ALL, **LATENCY}.items():
        (HERE / f"{name}.json").write_text(json.dumps(build(), indent=1) + "\n")
