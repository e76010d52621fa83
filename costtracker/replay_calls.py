"""What a replay does besides delivering its events and schedules, for budget actions:
the crossing timers (an SQS message delayed to the second, delivered at that second),
the state changes a stop brings about (EC2 ``stopping`` at the stop and ``stopped`` 60 s
later; SageMaker ``Stopping``, then ``Stopped`` 120 s later), the scenario's
``api_calls`` through the API handler, and the ``actions`` the document lists.
"""

from __future__ import annotations

import json
from copy import deepcopy
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from costtracker.fakes.scenario_events import ec2_state_event, instance_arn
from costtracker.lambda_context import FakeLambdaContext
from costtracker.local_api import proxy_event
from shared.adapters.action_store import ActionStore
from shared.adapters.crossing_timers import delay_seconds
from shared.reports.formatting import iso

if TYPE_CHECKING:
    from costtracker.fakes.scenario_aws import ScenarioTrainingJobs
    from costtracker.routing import Replayer
    from costtracker.scenario import ApiCallSpec, Scenario

EC2_STOPPED_AFTER = timedelta(seconds=60)
SAGEMAKER_STOPPED_AFTER = timedelta(seconds=120)


def caller_arn(account: str, who: str) -> str:
    """The replay's caller for ``as``: finance, admin or team:NAME."""
    name = who.replace(":", "-")
    return f"arn:aws:sts::{account}:assumed-role/costtracker-replay-{name}/replay"


def access_rules(scenario: Scenario) -> list[dict[str, Any]]:
    """One access rule per caller the scenario's ``api_calls`` name."""
    rules = []
    for who in sorted({call.as_ for call in scenario.api_calls}):
        team = who.partition(":")[2] or None
        role = "team" if team else who
        rule = {"arn_pattern": caller_arn(scenario.account, who), "role": role}
        rules.append({**rule, "team": team} if team else rule)
    return rules


class ReplayTimers:
    """``CrossingTimers`` as SQS would run them: delivered at the delay's whole second."""

    def __init__(self, replayer: Replayer) -> None:
        self._replayer = replayer

    def plan(self, budget_id: str, threshold: int, moment: datetime, now: datetime) -> None:
        body = {"budget_id": budget_id, "threshold": threshold, "moment": moment.isoformat()}
        due = now + timedelta(seconds=delay_seconds(moment, now))
        self._replayer.defer(due, "timer", body)


def _ec2_state(replayer: Replayer, iid: str, region: str, account: str, state: str) -> None:
    scenario = replayer.scenario
    at = replayer.clock.now() + (EC2_STOPPED_AFTER if state == "stopped" else timedelta(0))
    account, region = account or scenario.account, region or scenario.region
    arn = instance_arn(iid, account=account, region=region)
    event = ec2_state_event(
        f"costtracker-stop-{iid}-{state}-{iso(at)}",
        iid,
        state,
        at,
        account=account,
        region=region,
        resources=[arn],
    )
    replayer.defer(at, "event", event)


def on_instance_stop(replayer: Replayer) -> Any:
    def listen(iid: str, region: str, account: str) -> None:
        _ec2_state(replayer, iid, region, account, "stopping")
        _ec2_state(replayer, iid, region, account, "stopped")

    return listen


def on_training_stop(replayer: Replayer, jobs: ScenarioTrainingJobs) -> Any:
    """Stopping now, Stopped 120 s later (the SIGTERM window), billed up to then."""

    def listen(name: str, region: str, account: str) -> None:
        now = replayer.clock.now()
        seen = jobs.raw.get(name, [])
        if not seen:
            return
        stopped_at = now + SAGEMAKER_STOPPED_AFTER
        jobs.stopped_at[name] = stopped_at
        for status, at in (("Stopping", now), ("Stopped", stopped_at)):
            event = deepcopy(seen[-1])
            event["id"] = f"costtracker-stop-{name}-{status}-{iso(at)}"
            event["time"] = iso(at)
            event["detail"]["TrainingJobStatus"] = status
            event["detail"]["SecondaryStatus"] = status
            if status == "Stopped":
                event["detail"]["TrainingEndTime"] = int(at.timestamp() * 1000)
            jobs.add(event)
            replayer.defer(at, "event", event)

    return listen


def call_api(replayer: Replayer, call: ApiCallSpec) -> dict[str, Any]:
    """One ``api_calls`` entry through the API handler, at the clock's now."""
    from functions.job_cost_api.handler import handler

    body = json.dumps(call.body) if call.body is not None else None
    arn = caller_arn(replayer.scenario.account, call.as_)
    event = proxy_event(
        call.method, call.path, {"Content-Type": "application/json"}, body, user_arn=arn
    )
    response = handler(event, FakeLambdaContext("job_cost_api"))  # type: ignore[arg-type]
    try:
        answer = json.loads(response.get("body") or "null")
    except ValueError:
        answer = response.get("body")
    return {
        "at": iso(replayer.clock.now()),
        "as": call.as_,
        "method": call.method,
        "path": call.path,
        "status": int(response.get("statusCode", 0)),
        "body": answer,
    }


def collect_actions(store: ActionStore) -> list[dict[str, Any]]:
    """The document's ``actions``: each with what it acted on (or, dry, would have)."""
    actions = []
    for record in store.all():
        targets = store.targets(record.action_id)
        actions.append(
            {
                "action_id": record.action_id,
                "budget_id": record.budget_id,
                "kind": record.kind,
                "threshold": record.at_percent,
                "fired_at": iso(record.fired_at),
                "acted_at": iso(record.acted_at),
                "instance_ids": sorted(t.target_id for t in targets if t.kind == "instance"),
                "training_jobs": sorted(t.target_id for t in targets if t.kind == "training_job"),
                "dry_run": record.dry_run,
                "state": record.state,
                "detail": record.detail,
                "targets": [
                    {"id": t.target_id, "kind": t.kind, "result": t.result, "at": iso(t.acted_at)}
                    for t in sorted(targets, key=lambda t: (t.kind, t.target_id))
                ],
                **({"released_by": record.released_by} if record.released_by else {}),
            }
        )
    return sorted(actions, key=lambda a: (a["fired_at"] or "", a["action_id"]))
